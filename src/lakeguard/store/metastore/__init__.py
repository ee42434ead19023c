"""The parts of `MetadataStore`, one concern per module, each a mixin over `StoreBase`
(names, locations, the clock): the tables' lifecycle, appends, reads and definition writes;
`lakeguard.store.store` composes them."""
