"""The figures of the docs come from one command (``python -m benchmarks.report``): every measured table sits in a
stamped report block of a known section, the stamp reads back, blocks are written in place, and the command runs
on a tiny budget."""
from __future__ import annotations

import datetime as dt
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("benchmark_report", ROOT / "benchmarks" / "report.py")
report = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = report  # (its dataclasses look their module up)
_spec.loader.exec_module(report)
SECTIONS, STAMP, ReportError, Section = report.SECTIONS, report.STAMP, report.ReportError, report.Section
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: a cell that states a measurement: a percentage, a rate, a ratio (3.2x), a duration
FIGURE = re.compile(r"\d(\.\d+)?\s?%|\d\s?(decisions|steps|games|game steps)\s?/\s?s\b|/s\b|\b\d+(\.\d+)?x\b|"
                    r"\b\d+(\.\d+)?\s?(min|ms|us)\b")
#: the generated blocks of docs/gen_tables.py (facts of the code, not measurements) and the report's blocks
BLOCKS = re.compile(r"<!-- (?:REPORT )?BEGIN (?P<name>[^>]*?) -->.*?<!-- (?:REPORT )?END (?P=name) -->", re.S)


def _tables_outside_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the table rows of ``text`` that lie outside every marked block."""
    spans = [m.span() for m in BLOCKS.finditer(text)]
    out, offset = [], 0
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        if line.startswith("|") and not any(a <= offset < b for a, b in spans):
            out.append((number, line.rstrip()))
        offset += len(line)
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_figure_table_is_a_stamped_block_of_a_known_report_section(page):
    loose = [f"{page.relative_to(ROOT)}:{n}: {line[:90]}" for n, line in _tables_outside_blocks(page.read_text())
             if FIGURE.search(re.sub(r"\b95\s?%", "", line))]  # (a "95% interval" is a definition, not a figure)
    assert not loose, "tables of figures outside a report block:\n" + "\n".join(loose)
    _check_blocks(page)  # and every block in it is a known section's, stamped


def _check_blocks(page: Path) -> None:
    seen = []
    for name, body in report.blocks(page.read_text()):
        where = f"{page.relative_to(ROOT)}: block {name}"
        assert name in SECTIONS, f"{where}: no such section in benchmarks/report.py"
        assert str(page.relative_to(ROOT)) in SECTIONS[name].pages, f"{where}: the section writes {SECTIONS[name].pages}"
        stamps = list(STAMP.finditer(body))
        assert len(stamps) == 1, f"{where}: needs one stamp line"
        s = stamps[0]
        assert s["name"] == name and s["command"] == SECTIONS[name].command and not s["tiny"], where
        seen.append(name)
    assert len(seen) == len(set(seen)), "a section's block appears twice in a page"


@pytest.mark.parametrize("name", sorted(SECTIONS))
def test_every_section_has_its_one_block_in_each_of_its_pages(name):
    """``--write`` finds where to put every section's block (a missing marker would fail after the measurement)."""
    for page in SECTIONS[name].pages:
        found = [n for n, _ in report.blocks((ROOT / page).read_text()) if n == name]
        assert len(found) == 1, f"{page} has {len(found)} blocks of section {name}"


def test_the_stamp_reads_back():
    section = SECTIONS["env-throughput"]
    line = report.stamp(section, 0.25, 1.5, tiny=False, when=dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.timezone.utc))
    m = STAMP.fullmatch(line)
    assert m and m["name"] == "env-throughput" and m["command"] == section.command
    assert (m["date"], m["before"], m["after"], m["tiny"]) == ("2026-01-02 03:04", "0.25", "1.50", None)
    assert STAMP.fullmatch(report.stamp(section, 0, 0, tiny=True))["tiny"]


def test_extract_keeps_the_tables_and_the_figure_lines():
    section = Section("x", "docs/results.md", "python x.py", "", keep=r"^ratio")
    out = report.extract(section, "noise\n| a | b |\n|---|---|\n| 1 | 2 |\nratio: 2.0x\n\n| c |\n|---|\n| 3 |\n")
    assert out == "| a | b |\n|---|---|\n| 1 | 2 |\n\n| c |\n|---|\n| 3 |\n\n- ratio: 2.0x"
    assert report.extract(Section("x", "p", "python x.py", "", tables=(1,)), out).startswith("| c |")
    with pytest.raises(ReportError, match="printed no markdown table"):
        report.extract(section, "no table here\n| not a table |\n")


def test_column_aligned_tables_become_markdown():
    text = "Random play, seed 0\nname      rate  x peer\n--------  ----  ------\nMegaGem   1,000   2.50\npeer        400   1.00\n\nend\n"
    out = report.extract(Section("x", "p", "python x.py", "", keep="^Random"), text)
    assert out == ("| name | rate | x peer |\n|---|---|---|\n| MegaGem | 1,000 | 2.50 |\n| peer | 400 | 1.00 |\n\n"
                   "- Random play, seed 0")


def test_write_replaces_the_one_block_of_its_page(tmp_path):
    section = Section("demo", "page.md", "python demo.py", "")
    page = tmp_path / "page.md"
    page.write_text("# P\n\n<!-- REPORT BEGIN demo -->\nold\n<!-- REPORT END demo -->\n\nafter\n")
    report.write(section, "<!-- REPORT BEGIN demo -->\nnew\n<!-- REPORT END demo -->", root=tmp_path)
    assert page.read_text() == "# P\n\n<!-- REPORT BEGIN demo -->\nnew\n<!-- REPORT END demo -->\n\nafter\n"
    page.write_text("# P\n")
    with pytest.raises(ReportError, match="has 0 blocks"):
        report.write(section, "x", root=tmp_path)


def test_the_command_line_lists_and_refuses_in_one_line(capsys):
    assert report.main(["--list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in SECTIONS)
    for argv, words in [(["nope"], "unknown section 'nope'"), (["--all", "--tiny", "--write"], "not written"),
                        ([], "name a section or --all")]:
        with pytest.raises(SystemExit):
            report.main(argv)
        assert words in capsys.readouterr().err


@pytest.mark.parametrize("name", ["megagem-baselines", "gem-selfplay"])  # (a benchmark script, a training run)
def test_sections_run_on_a_tiny_budget(name, capsys):
    assert report.main([name, "--tiny"]) == 0
    out = capsys.readouterr().out
    (block_name, body), = report.blocks(out)
    assert block_name == name and "|---" in body and STAMP.search(body)["tiny"]


def test_the_readme_gets_the_short_form_with_the_same_stamp(tmp_path):
    section = Section("demo", "docs/page.md", "python demo.py", "", readme=r"all")
    (tmp_path / "docs").mkdir()
    for name in section.pages:
        (tmp_path / name).write_text("<!-- REPORT BEGIN demo -->\n<!-- REPORT END demo -->\n")
    block = "\n".join(["<!-- REPORT BEGIN demo -->", "| who | chart | win |", "|---|---|---|", "| a | all | 50% |",
                       "| a | A | 40% |", "", "- ratio 2x", "", "*stamp*", "<!-- REPORT END demo -->"])
    report.write(section, block, root=tmp_path)
    assert (tmp_path / "docs/page.md").read_text() == block + "\n"
    assert (tmp_path / "README.md").read_text() == "\n".join([
        "<!-- REPORT BEGIN demo -->", "| who | chart | win |", "|---|---|---|", "| a | all | 50% |", "", "*stamp*",
        "<!-- REPORT END demo -->"]) + "\n"


def test_the_stamps_commit_counts_code_changes_not_the_pages_the_report_writes(tmp_path, monkeypatch):
    import subprocess

    def run(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    run("init", "-q")
    (tmp_path / "docs").mkdir()
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / "docs" / "page.md").write_text("# P\n")
    (tmp_path / "README.md").write_text("# R\n")
    run("add", ".")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    monkeypatch.setattr(report, "ROOT", tmp_path)
    head = report.commit()
    assert re.fullmatch(r"[0-9a-f]{7,}", head)
    (tmp_path / "docs" / "page.md").write_text("# P\n\nnew table\n")
    (tmp_path / "README.md").write_text("# R\n\nnew table\n")
    assert report.commit() == head
    (tmp_path / "code.py").write_text("x = 2\n")
    assert report.commit() == head + "+changes"
