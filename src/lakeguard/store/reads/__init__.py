"""The named queries of `StoreReader`, one concern per module, each a mixin over
`ReaderBase` (the store and its kept answers); `lakeguard.store.reader` composes them."""
