"""Binary HLO: the ``.hlo.pb`` files of an XLA dump (``--xla_dump_hlo_as_proto``), turned
into HLO text with jaxlib.

XLA writes an ``HloProto`` there (gzipped as ``.hlo.pb.gz`` with
``--xla_dump_compress_protos``): a message whose field 1 is the ``HloModuleProto`` (field 3,
the buffer assignment of an optimised module, is of no use here). Tools that serialise a
module themselves (``XlaComputation.as_serialized_hlo_module_proto()``) write the
``HloModuleProto`` alone. :func:`proto_to_hlo` takes either: it reads field 1 out of the
outer message with the protobuf wire format (a varint key, a varint length), tries the
module that gives, then the whole data as a module, and hands it to jaxlib's
``XlaComputation``, which prints it as HLO text with its metadata and every constant in
full. jaxlib is the ``jax`` extra (``pip install 'symidx[jax]'``), imported only here;
:func:`has_jaxlib` says whether it is there.
"""

from __future__ import annotations

import importlib.util

from symidx.errors import SymidxError

__all__ = ["PROTO_SUFFIXES", "has_jaxlib", "is_proto_file", "proto_to_hlo"]

#: The names of binary HLO files.
PROTO_SUFFIXES = (".hlo.pb", ".hlo.pb.gz")


def is_proto_file(path: str) -> bool:
    """Whether ``path`` names a binary HLO file (by its name)."""
    return path.endswith(PROTO_SUFFIXES)


def has_jaxlib() -> bool:
    """Whether jaxlib can be imported (without importing it)."""
    return importlib.util.find_spec("jaxlib") is not None


def proto_to_hlo(data: bytes, source: str = "") -> str:
    """The HLO text of a serialised ``HloProto`` or ``HloModuleProto``, printed by jaxlib.

    Raises :class:`~symidx.errors.SymidxError` naming ``source`` when jaxlib is missing or
    reads neither message from ``data``."""
    where = f"{source}: " if source else ""
    try:
        from jax._src.lib import xla_client
        from jaxlib import _hlo  # type: ignore[attr-defined]
    except ImportError:
        raise SymidxError(f"{where}binary HLO (an HloProto); reading it needs jaxlib: pip "
                          f"install 'symidx[jax]', or dump text with "
                          f"--xla_dump_hlo_as_text") from None
    inner = _field_one(data)
    first = ""
    for candidate in ([inner] if inner is not None else []) + [data]:
        try:
            module = xla_client.XlaComputation(candidate).get_hlo_module()
        except Exception as e:  # noqa: BLE001 - jaxlib raises its own runtime errors
            first = first or (str(e).strip().splitlines() or ["no reason given"])[0]
            continue
        options = _hlo.HloPrintOptions()
        options.print_metadata = True
        options.print_large_constants = True
        return str(module.to_string(options))
    raise SymidxError(f"{where}not an HloProto or HloModuleProto jaxlib can read: {first}")


def _field_one(data: bytes) -> bytes | None:
    """The bytes of field 1 of a protobuf message, when the message starts with it as a
    length-delimited field (key ``0x0a``) that fits in ``data``; else None."""
    if not data or data[0] != 0x0A:
        return None
    length, at = _varint(data, 1)
    if length is None or at + length > len(data):
        return None
    return data[at:at + length]


def _varint(data: bytes, at: int) -> tuple[int | None, int]:
    """A base-128 varint at ``data[at:]``: (value, offset after it), or (None, at)."""
    value, shift = 0, 0
    for k in range(at, min(len(data), at + 10)):
        value |= (data[k] & 0x7F) << shift
        if not data[k] & 0x80:
            return value, k + 1
        shift += 7
    return None, at
