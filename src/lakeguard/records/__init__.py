"""Typed records, row classes and pure facts about them: the layer above the words, below the
store."""
