"""The generated tables of docs/ equal what docs/gen_tables.py writes from the code now."""
import pytest

import gen_tables_loader

DOCS = gen_tables_loader.DOCS
gen_tables = gen_tables_loader.load()


@pytest.mark.parametrize("page", sorted(gen_tables.BLOCKS))
def test_generated_tables_are_up_to_date(page):
    committed = (DOCS / page).read_text()
    assert gen_tables.render(page, committed) == committed, (
        f"docs/{page} is out of date: run `python docs/gen_tables.py` and commit the result")


def test_render_fills_blocks_and_rejects_missing_or_unknown_markers():
    page = "megagem.md"
    names = list(gen_tables.BLOCKS[page])
    empty = "\n".join(f"intro\n<!-- BEGIN {n} -->\nstale\n<!-- END {n} -->" for n in names) + "\n"
    filled = gen_tables.render(page, empty)
    assert "stale" not in filled and filled.count("intro") == len(names)
    assert "| 1 | Shield: 2 pairs | 15 |" in filled
    with pytest.raises(ValueError, match="no markers"):
        gen_tables.render(page, "nothing here\n")
    with pytest.raises(ValueError, match="unknown generated block"):
        gen_tables.render(page, empty + "<!-- BEGIN bogus -->\n<!-- END bogus -->\n")


def test_observation_tables_cover_every_slot():
    from gemenvs.megagem.game import MegaGem

    text = (DOCS / "megagem.md").read_text()
    for n in gen_tables.PLAYER_COUNTS:
        spec = MegaGem(num_players=n).spec
        block = text.split(f"<!-- BEGIN obs-table players={n} -->")[1].split("<!-- END")[0]
        rows = [line for line in block.splitlines() if line.startswith("| ") and not line.startswith("| offset")]
        assert [r.split(" | ")[3].strip("`") for r in rows] == spec.names
        assert sum(int(r.split(" | ")[1]) for r in rows) == spec.size
