"""Reading a game's JSON data file (a card manifest) from its default, a path or a parsed dict."""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def read_json_source(source: str | os.PathLike | Mapping | None, default: Path, what: str,
                     error: type[ValueError]) -> tuple[Any, str]:
    """The parsed JSON of ``source`` (None: the ``default`` file; a path; or an already parsed dict)
    and a short name of it for error messages; an unreadable file raises ``error`` naming ``what``."""
    if source is None:
        source, name = default, "default"
    elif isinstance(source, (str, os.PathLike)):
        name = str(source)
    elif isinstance(source, Mapping):
        return source, "dict"
    else:
        raise error(f"{what} must be None, a path or a dict; got {type(source).__name__}")
    try:
        with open(source, encoding="utf-8") as f:
            return json.load(f), name
    except OSError as err:
        raise error(f"cannot read {what} {name}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise error(f"{what} {name} is not UTF-8 text") from None
    except json.JSONDecodeError as err:
        raise error(f"{what} {name} is not valid JSON: {err}") from None
