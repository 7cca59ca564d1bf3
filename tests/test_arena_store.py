"""The arena's rows: authors' tokens kept only as hashes, uploads with their requests, the board the daemon keeps."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from referee.league.authors import author_of_token, new_author, token_sha256
from referee.results.arena_store import ArenaStore, BoardRow, UploadStep
from referee.results.schema import make_private
from referee.results.store import StoreError
from tests.clirun import invoke


@pytest.fixture
def store(tmp_path: Path) -> ArenaStore:
    arena = ArenaStore(tmp_path / "league.db")
    arena.create_league("test", "league.toml", "", "fingerprint", 7)
    return arena


def test_a_token_is_shown_once_and_kept_only_as_its_hash(store: ArenaStore) -> None:
    _, token = new_author(store, "alice")
    assert author_of_token(store, token) == store.author("alice")
    dump = b"".join(line.encode() for line in store._db.iterdump())
    assert token.encode() not in dump and token.split("_", 2)[2].encode() not in dump
    assert token_sha256(token).encode() in dump
    assert len(token.split("_", 2)[2]) == 43  # 256 bits, base64url


@pytest.mark.parametrize("mangle", [lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"), lambda t: t + "x",
                                    lambda t: t.replace("_2_", "_1_"), lambda t: "", lambda t: "durak_1_" + "a" * 43])
def test_a_wrong_token_is_nobody(store: ArenaStore, mangle: object) -> None:
    new_author(store, "alice")
    _, bob = new_author(store, "bob")
    assert callable(mangle)
    assert mangle(bob) != bob and author_of_token(store, bob) is not None
    assert author_of_token(store, mangle(bob)) is None  # a secret under another's id included


def test_revoking_ends_the_token_and_raises_the_epoch(store: ArenaStore) -> None:
    _, token = new_author(store, "alice")
    assert store.revoke_author("alice").epoch == 1
    assert author_of_token(store, token) is None
    with pytest.raises(StoreError, match="no author 'carol'"):
        store.revoke_author("carol")


def test_a_name_taken_or_malformed_is_refused(store: ArenaStore) -> None:
    new_author(store, "alice")
    with pytest.raises(StoreError, match="cannot add author 'alice'"):
        new_author(store, "alice")
    with pytest.raises(ValueError, match="bad author name"):
        new_author(store, "<img src=x>")


def test_an_upload_is_stored_with_its_request_and_loses_its_archive_when_done(store: ArenaStore) -> None:
    league = store.league()
    assert league is not None
    upload = store.add_upload(league.id, "alice", "bot", b"archive", "00")
    (request,) = store.pending_requests(league.id)
    assert (request.kind, request.payload["upload"], upload.request_id) == ("upload", upload.id, request.id)
    store.step_upload(upload.id, "building", UploadStep("extract", True, "2 files"))
    assert store.archive(upload.id) == b"archive"
    store.step_upload(upload.id, "refused", UploadStep("build", False, "exit 2"), build_log="cc: error")
    done = store.upload(upload.id)
    assert (done.status, done.done, [s.step for s in done.steps], done.build_log) == (
        "refused", True, ["extract", "build"], "cc: error")
    assert store.archive(upload.id) is None
    assert store.upload_usage("alice", "2000-01-01") == (1, 0)  # a refused archive takes no room


def test_the_board_keeps_a_point_of_history_only_when_games_change(store: ArenaStore) -> None:
    league = store.league()
    assert league is not None
    store.save_board(league.id, [BoardRow("a@1", 1, 10.0, float("inf"), 3, "t1")])
    store.save_board(league.id, [BoardRow("a@1", 1, 11.0, 5.0, 3, "t2")])
    store.save_board(league.id, [BoardRow("a@1", 1, 12.0, 4.0, 5, "t3"), BoardRow("b@1", 2, 0.0, 4.0, 5, "t3")])
    assert [(r.version, r.elo) for r in store.board(league.id)] == [("a@1", 12.0), ("b@1", 0.0)]
    history = store.rating_history(league.id, ["a@1"])
    assert [(p.fitted, p.sd) for p in history] == [("t1", None), ("t3", 4.0)]


def test_the_web_key_is_drawn_once(store: ArenaStore, tmp_path: Path) -> None:
    key = store.web_key()
    assert len(key) == 32 and store.web_key() == key
    assert ArenaStore(tmp_path / "other.db").web_key() != key


def test_a_database_given_to_a_group_stays_shared(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("chown to another group needs root")
    path = tmp_path / "league.db"
    ArenaStore(path).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    os.chown(path, -1, 65534)  # nogroup, not root's own group
    os.chmod(path, 0o660)
    make_private(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o660
    os.chown(path, -1, 0)  # back to the owner's group: private again
    make_private(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


# --- durak league author ---------------------------------------------------------------------------------------


def test_author_add_prints_the_token_once_and_list_never_shows_it(store: ArenaStore) -> None:
    db = str(store.path)
    added = invoke("league", "author", "add", db, "alice")
    assert added.code == 0, added.output
    token = added.out.strip()
    assert author_of_token(store, token) == store.author("alice")
    assert token not in added.err and "shown this once" in added.err
    admin = invoke("league", "author", "add", db, "organizer", "--admin")
    assert store.author("organizer") is not None and store.author("organizer").admin  # type: ignore[union-attr]
    listed = invoke("league", "author", "list", db)
    assert "alice" in listed.out and "admin" in listed.out and token not in listed.output
    assert admin.out.strip() not in listed.output
    revoked = invoke("league", "author", "revoke", db, "alice")
    assert revoked.code == 0 and author_of_token(store, token) is None


@pytest.mark.parametrize(("args", "message"), [
    (("add", "{db}", "bad name"), "bad author name"),
    (("add", "{db}", "alice"), "cannot add author 'alice'"),
    (("revoke", "{db}", "nobody"), "no author 'nobody'"),
    (("add", "{empty}", "carol"), "holds no league"),
])
def test_author_commands_refuse_bad_input_in_one_line(store: ArenaStore, tmp_path: Path, args: tuple[str, ...],
                                                      message: str) -> None:
    new_author(store, "alice")
    ran = invoke("league", "author", *(a.format(db=store.path, empty=tmp_path / "empty.db") for a in args))
    assert ran.code in (2, 6), ran.output
    assert message in ran.err and len(ran.err.strip().splitlines()) == 1 and "Traceback" not in ran.err
