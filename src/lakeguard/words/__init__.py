"""Words and plain shapes every module of LakeGuard may use (the lowest layer)."""
