"""OCT wire messages and the protocol's data types.

A message on the wire is a msgpack map: `version`, `kind`, `metadata` (encryption keys and
compression), `content`, plus `id` (requests and responses), `origin` and `target`. Between peers
`content` is ciphertext (bytes); to and from the server it is the plain content map.
`Envelope` is the parsed form; `Peer`, `InitData` and friends are the typed params of methods.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.oct.codec import UNDEFINED

PROTOCOL_VERSION = "0.3.1"
SERVER = ""  # the origin/target that means "the server itself"

Kind = Literal["request", "response", "response-error", "notification", "broadcast", "error"]
KINDS: frozenset[str] = frozenset(
    ["request", "response", "response-error", "notification", "broadcast", "error"]
)


class ProtocolError(ValueError):
    """A message that does not have the shape the protocol requires."""


@dataclass(frozen=True)
class ContentKey:
    """The sender's symmetric key, encrypted for one recipient, and the message's IV."""

    target: str
    key: str
    iv: str

    def to_wire(self) -> dict[str, str]:
        return {"target": self.target, "key": self.key, "iv": self.iv}


@dataclass
class Envelope:
    kind: str
    content: Any
    version: str = PROTOCOL_VERSION
    keys: list[ContentKey] = field(default_factory=list)
    compression: str = "none"
    id: int | str | None = None
    origin: str | None = None
    target: str | None = None

    @property
    def encrypted(self) -> bool:
        return isinstance(self.content, bytes)

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "version": self.version,
            "kind": self.kind,
            "metadata": {
                "encryption": {"keys": [k.to_wire() for k in self.keys]},
                "compression": {"algorithm": self.compression},
            },
            "content": self.content,
        }
        if self.id is not None:
            wire["id"] = self.id
        if self.kind in ("request", "notification", "broadcast"):
            wire["origin"] = self.origin if self.origin is not None else SERVER
        if self.kind in ("request", "notification"):
            wire["target"] = self.target if self.target is not None else UNDEFINED
        return wire


def _str_field(raw: dict[Any, Any], name: str, required: bool = True) -> str | None:
    value = raw.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise ProtocolError(f"field {name!r} must be a string")
    return value


def _parse_keys(metadata: Any) -> tuple[list[ContentKey], str]:
    if not isinstance(metadata, dict):
        raise ProtocolError("metadata missing")
    encryption, compression = metadata.get("encryption"), metadata.get("compression")
    if not isinstance(encryption, dict) or not isinstance(encryption.get("keys"), list):
        raise ProtocolError("metadata.encryption.keys missing")
    if not isinstance(compression, dict) or not isinstance(compression.get("algorithm"), str):
        raise ProtocolError("metadata.compression.algorithm missing")
    keys = []
    for item in encryption["keys"]:
        if not isinstance(item, dict):
            raise ProtocolError("encryption key entry is not a map")
        keys.append(
            ContentKey(
                target=_str_field(item, "target") or "",
                key=_str_field(item, "key") or "",
                iv=_str_field(item, "iv") or "",
            )
        )
    return keys, compression["algorithm"]


def parse_envelope(raw: Any) -> Envelope:
    """Check the common shape of a decoded message (ProtocolError when it is not one)."""
    if not isinstance(raw, dict):
        raise ProtocolError("message is not a map")
    kind = _str_field(raw, "kind")
    if kind not in KINDS:
        raise ProtocolError(f"unknown message kind {kind!r}")
    version = _str_field(raw, "version") or ""
    keys, compression = _parse_keys(raw.get("metadata"))
    message_id = raw.get("id")
    if kind in ("request", "response", "response-error"):
        if isinstance(message_id, bool) or not isinstance(message_id, (int, float, str)):
            raise ProtocolError(f"{kind} without a valid id")
        if isinstance(message_id, float) and message_id.is_integer():
            message_id = int(message_id)
    return Envelope(
        kind=kind,
        content=raw.get("content"),
        version=version,
        keys=keys,
        compression=compression,
        id=message_id if kind in ("request", "response", "response-error") else None,
        origin=_str_field(raw, "origin", required=False),
        target=_str_field(raw, "target", required=False),
    )


@dataclass(frozen=True)
class Call:
    """The plain content of a request, notification or broadcast."""

    method: str
    params: list[Any]


def parse_call(content: Any) -> Call:
    if not isinstance(content, dict) or not isinstance(content.get("method"), str):
        raise ProtocolError("content has no method")
    params = content.get("params")
    if params is None:
        params = []
    if not isinstance(params, list):
        raise ProtocolError("params is not an array")
    return Call(content["method"], params)


def compatible_versions(incoming: str, own: str = PROTOCOL_VERSION) -> bool:
    """Same major version, and in 0.x the same minor version too (patch ignored)."""
    try:
        a = [int(part) for part in incoming.split("-")[0].split(".")[:2]]
        b = [int(part) for part in own.split(".")[:2]]
    except ValueError:
        return False
    if len(a) < 2 or a[0] != b[0]:
        return False
    return a[0] != 0 or a[1] == b[1]


# -- typed params ---------------------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class EncryptionMeta(_Model):
    publicKey: str


class CompressionMeta(_Model):
    supported: list[str] = Field(default_factory=lambda: ["none"])


class PeerMeta(_Model):
    encryption: EncryptionMeta
    compression: CompressionMeta = Field(default_factory=CompressionMeta)


class Peer(_Model):
    id: str
    host: bool = False
    name: str = ""
    email: str | None = None
    metadata: PeerMeta


class WorkspaceInfo(_Model):
    name: str = "Collaboration"
    folders: list[str] = Field(default_factory=list)


class Permissions(_Model):
    readonly: bool = False


class InitData(_Model):
    protocol: str = PROTOCOL_VERSION
    host: Peer
    guests: list[Peer] = Field(default_factory=list)
    permissions: Permissions = Field(default_factory=Permissions)
    capabilities: dict[str, Any] = Field(default_factory=dict)
    workspace: WorkspaceInfo = Field(default_factory=WorkspaceInfo)


class FileStat(_Model):
    type: int
    mtime: float = 0
    ctime: float = 0
    size: int = 0
    permissions: int | None = None


FILE_TYPE_FILE = 1
FILE_TYPE_DIRECTORY = 2


def parse_model(model: type[_Model], value: Any, what: str) -> Any:
    """Validate a param (ProtocolError with a short reason when it does not fit)."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise ProtocolError(f"invalid {what}: {where} {first.get('msg', '')}".strip()) from None


class Methods:
    """Method names of the protocol (see Messages in open-collaboration-protocol)."""

    PEER_JOIN = "peer/join"
    PEER_INFO = "peer/info"
    PEER_INIT = "peer/init"
    ROOM_JOINED = "room/joined"
    ROOM_LEFT = "room/left"
    ROOM_LEAVE = "room/leave"
    ROOM_CLOSED = "room/closed"
    ROOM_PERMISSIONS = "room/permissionsUpdated"
    EDITOR_OPEN = "editor/open"
    EDITOR_CLOSE = "editor/close"
    EDITOR_PROPOSE = "editor/createDiff"
    EDITOR_CLOSE_PROPOSAL = "editor/closeProposal"
    SYNC_DATA_UPDATE = "sync/dataUpdate"
    SYNC_DATA_NOTIFY = "sync/dataNotify"
    SYNC_AWARENESS_UPDATE = "sync/awarenessUpdate"
    SYNC_AWARENESS_NOTIFY = "sync/awarenessNotify"
    SYNC_AWARENESS_QUERY = "sync/awarenessQuery"
    FS_STAT = "fileSystem/stat"
    FS_READ_FILE = "fileSystem/readFile"
    FS_READ_DIR = "fileSystem/readDir"
    FS_WRITE_FILE = "fileSystem/writeFile"
    FS_MKDIR = "fileSystem/mkdir"
    FS_DELETE = "fileSystem/delete"
    FS_RENAME = "fileSystem/rename"
    FS_CHANGE = "fileSystem/change"
    CHAT_MESSAGE = "chat/message"
    CHAT_DIRECT = "chat/directMessage"
    CHAT_WRITING = "chat/writing"
