"""Field types shared by the metadata models and the kind classes (pure)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

Identifier = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,62}$")]
ColumnName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]


class Strict(BaseModel):
    """A metadata model: unknown fields are errors, instances never change."""

    model_config = ConfigDict(extra="forbid", frozen=True)
