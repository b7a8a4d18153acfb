import pytest

from llm_backends.paths import build_folder, cache_root


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TRADEDUEL_CACHE", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    monkeypatch.delenv("TRADEDUEL_CACHE")
    assert cache_root().parts[-2:] == (".cache", "tradeduel")


def write(text):
    def build(folder):
        folder.mkdir()
        (folder / "f.txt").write_text(text)
    return build


def test_build_folder_publishes_whole_folders_only(tmp_path):
    dest = tmp_path / "models" / "m"

    def fail(folder):
        write("half")(folder)
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        build_folder(dest, fail)
    assert not dest.exists() and list(dest.parent.iterdir()) == []
    build_folder(dest, write("first"))
    build_folder(dest, write("second"))
    assert (dest / "f.txt").read_text() == "first"
    assert [p.name for p in dest.parent.iterdir()] == ["m"]
