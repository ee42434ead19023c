"""LakeGuard: the control plane. Owns all metadata and every decision; never imports openlaketx."""
