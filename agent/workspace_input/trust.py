"""Which folders the user trusts, remembered with each folder's identity, in the user's config.toml.

    [folder_trust."/home/me/project"]
    trusted = true                      # false: asked and declined; the app does not ask again
    identity = "2049:5441609:22844599"  # device, inode and inode generation of the folder

A path alone is not a folder: `rm -rf project && git clone <other> project` puts a different
repository at the same path, and ext4 hands the new folder the inode number the old one had.
The inode generation (FS_IOC_GETVERSION) changes whenever an inode is reused, so device, inode and
generation together name one folder for as long as it exists; a git pull or a branch switch keeps
it. (A git root commit would not do: a hostile fork shares it.) On a file system without
generations the identity is device and inode. A folder whose identity no longer matches is not
trusted, and the notice says why. Entries of the older `trusted_folders` list (paths only) are
still honoured until revoked; `coder-tui trust DIR` records the identity.
"""

from __future__ import annotations

import os
from pathlib import Path

from agent import paths
from agent.config import read_settings, save_user_settings
from agent.workspace_input import grants as grants_module
from agent.workspace_input.identity import Decision, identity
from agent.workspace_input.identity import decision as _decision

__all__ = ["Decision", "confirm", "decision", "grants", "identity", "listing", "remember", "revoke", "trust_folder",
           "unconfirmed"]


def decision(folder: Path) -> Decision:
    """The remembered answer for `folder`, from the user's config file."""
    return _decision(folder, read_settings(paths.user_config_file()).given())


def grants(folder: Path) -> dict[str, str]:
    """What trusting `folder` grants now, item by item (digest -> what it is)."""
    from agent.workspace_input import folderfiles

    return folderfiles.read(folder, read_settings(paths.user_config_file()).given()).grants(folder)


def unconfirmed(folder: Path) -> list[str]:
    """What `folder` would grant that the user's trust does not cover yet (all of it when not trusted)."""
    answer = decision(folder)
    return grants_module.unconfirmed(grants(folder), answer.confirmed if answer.trusted else [])


def remember(folder: Path, trusted: bool) -> Path:
    """Record the user's answer for `folder` with its identity and, when trusted, what the trust
    covers: the folder's files as they are now (the user config file's path)."""
    real = os.path.realpath(folder)
    current = read_settings(paths.user_config_file())
    table = {path: entry.model_dump(exclude_none=True) for path, entry in current.folder_trust.items()}
    table[real] = {"trusted": trusted, "identity": identity(folder)}
    if trusted:
        table[real]["confirmed"] = sorted(grants(folder))
    legacy = [item for item in current.trusted_folders if os.path.realpath(item) != real]
    return save_user_settings({"folder_trust": table, "trusted_folders": legacy or None})


def confirm(folder: Path, keys: list[str]) -> None:
    """Add items the user made themselves (a rule they saved for the folder) to what its trust covers;
    nothing when the folder is not trusted."""
    real = os.path.realpath(folder)
    current = read_settings(paths.user_config_file())
    entry = current.folder_trust.get(real)
    if entry is None or not entry.trusted or decision(folder).trusted is not True:
        return
    table = {path: item.model_dump(exclude_none=True) for path, item in current.folder_trust.items()}
    table[real]["confirmed"] = sorted({*(entry.confirmed or ()), *keys})
    save_user_settings({"folder_trust": table})


def trust_folder(folder: Path) -> Path:
    """Remember that `folder`'s own files may use every setting (the user config file's path)."""
    return remember(folder, True)


def revoke(folder: Path) -> bool:
    """Forget any answer for `folder`; False when there was none."""
    real = os.path.realpath(folder)
    current = read_settings(paths.user_config_file())
    table = {path: entry.model_dump(exclude_none=True) for path, entry in current.folder_trust.items()
             if path not in (real, str(folder))}
    legacy = [item for item in current.trusted_folders if os.path.realpath(item) != real and item != str(folder)]
    if len(table) == len(current.folder_trust) and len(legacy) == len(current.trusted_folders):
        return False
    save_user_settings({"folder_trust": table or None, "trusted_folders": legacy or None})
    return True


def listing() -> list[tuple[str, str]]:
    """(folder, state) for every remembered folder: trusted, declined, changed, gone, path only."""
    current = read_settings(paths.user_config_file())
    rows = []
    for path, entry in sorted(current.folder_trust.items()):
        try:
            same = identity(Path(path)) == entry.identity
        except OSError:
            rows.append((path, "gone (no such folder)"))
            continue
        state = "trusted" if entry.trusted else "not trusted (declined)"
        if same and entry.trusted and (new := grants_module.unconfirmed(grants(Path(path)), entry.confirmed)):
            state += f", but its files changed since ({len(new)} new: {'; '.join(new[:3])}): not applied"
        rows.append((path, state if same else f"{state}, but replaced since: not applied"))
    rows += [(path, "trusted (path only; `coder-tui trust DIR` records its identity)")
             for path in current.trusted_folders]
    return rows
