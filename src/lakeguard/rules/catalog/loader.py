"""Parse and validate metadata YAML: every error with its path (and line), nothing written.

Validation is pure: it needs no Spark and no store. It runs in three stages, each reporting all
of its problems at once: YAML syntax, the pydantic models, then cross-references (ids, parents,
columns, SQL expressions, job graphs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError as PydanticValidationError

from lakeguard.records.reach import Reach
from lakeguard.rules.catalog.checks.reach import check_reach
from lakeguard.rules.catalog.models import MetadataDocument
from lakeguard.rules.catalog.references import check_references
from lakeguard.words.errors import ValidationError


def _format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.isupper() and part.replace("_", "").isalpha():
            continue  # the discriminator tag pydantic inserts for rule unions
        else:
            out += f".{part}" if out else str(part)
    return out or "(document)"


def _line_of(root: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the YAML node at `loc`, or of its closest existing ancestor."""
    node = root
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            match = [v for k, v in node.value if getattr(k, "value", None) == part]
            if not match:
                continue
            node = match[0]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                break
            node = node.value[part]
        else:
            continue
        line = node.start_mark.line + 1
    return line


def parse_yaml(text: str, source: str = "<string>") -> tuple[Any, yaml.Node | None]:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        problem = getattr(exc, "problem", None) or str(exc)
        raise ValidationError(
            f"{source} is not valid YAML",
            where=where,
            errors=[{"path": where, "message": str(problem)}],
            fix="correct the YAML syntax at the position shown",
        ) from exc
    return data, node


def validate_text(
    text: str,
    source: str = "<string>",
    *,
    reach: Reach | None = None,
    base_dir: Path | None = None,
) -> MetadataDocument:
    """Validate one YAML document; raise ValidationError listing every problem. With the
    tenant's `reach`, what the document names (paths, relative ones taken from `base_dir`;
    secrets; destinations) is checked against it too."""
    data, node = parse_yaml(text, source)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValidationError(
            f"{source} must be a mapping at the top level",
            where=source,
            errors=[{"path": "(document)", "message": "expected a mapping of sections"}],
            fix="start the document with sections such as 'datasets:' and 'rules:'",
        )
    try:
        doc = MetadataDocument.model_validate(data)
    except PydanticValidationError as exc:
        errors = []
        for err in exc.errors():
            path = _format_loc(tuple(err["loc"]))
            line = _line_of(node, tuple(err["loc"]))
            errors.append(
                {"path": f"{path} (line {line})" if line else path, "message": err["msg"]}
            )
        raise ValidationError(
            f"{source} has {len(errors)} error(s)",
            where=source,
            errors=errors,
            fix="correct each listed field; see `laketx schema` for the document format",
        ) from None
    problems = check_references(doc)
    if reach is not None:
        problems += check_reach(doc, reach, base_dir)
    if problems:
        errors = [
            {
                "path": f"{p.path} (line {line})" if (line := _line_of(node, p.loc)) else p.path,
                "message": p.message,
            }
            for p in problems
        ]
        raise ValidationError(
            f"{source} has {len(errors)} error(s)",
            where=source,
            errors=errors,
            fix="correct each listed field; what a tenant may reach is set by the operator "
            '(docs/service.md, "Threat model")'
            if reach is not None and reach.confined
            else "correct each listed reference",
        )
    return doc


def documents_base(file: Path, reach: Reach | None) -> Path:
    """Where a document's relative paths start: a confined tenant's own home, however the
    document arrived (its reach is said from there), or else the document's folder."""
    if reach is not None and reach.confined and reach.tenant_home is not None:
        return Path(reach.tenant_home)
    return file.resolve().parent


def load_file(
    path: str | Path, *, reach: Reach | None = None, base_dir: Path | None = None
) -> MetadataDocument:
    """Read and validate a metadata YAML file (against the tenant's `reach` when given;
    relative paths from `base_dir`, by default `documents_base`)."""
    file = Path(path)
    if not file.is_file():
        raise ValidationError(
            f"metadata file {file} does not exist",
            where=str(file),
            errors=[{"path": str(file), "message": "file not found"}],
            fix="pass the path of a YAML metadata document",
        )
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationError(
            f"{file} is not UTF-8 text",
            where=str(file),
            errors=[{"path": str(file), "message": str(exc)}],
            fix="save the document as UTF-8",
        ) from exc
    folder = base_dir if base_dir is not None else documents_base(file, reach)
    return validate_text(text, str(file), reach=reach, base_dir=folder)
