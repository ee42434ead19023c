"""OpenLakeTx: the execution engine. Moves data only when LakeGuard allows it."""
