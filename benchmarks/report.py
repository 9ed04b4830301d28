"""Re-measure the figures of the docs and write each table, stamped, between its markers.

Every measured table in the README and the docs pages sits in a block

    <!-- REPORT BEGIN name -->
    ... the table(s) ...
    *Measured by ...: the command, the commit, the date, the machine and its load.*
    <!-- REPORT END name -->

that this command writes: it runs the section's command (a benchmark script, a training run, a
tournament), keeps the markdown tables it prints (and the lines of figures it prints beside them) and
stamps them with the command, the commit (``+changes`` when the work tree differs from it), the date,
the machine (system, CPU, cores) and its load average before and after the run.

    python -m benchmarks.report --list                 # the sections, their pages and commands
    python -m benchmarks.report env-throughput         # measure one section and print its block
    python -m benchmarks.report env-throughput --write # ... and write it into its page
    python -m benchmarks.report --all --write          # every section (hours: it trains make train's model)
    python -m benchmarks.report --all --tiny           # every command on a tiny budget, printed, not written

``--tiny`` runs each command with the small budget declared beside it (a check that the command and its
parsing work); its blocks say so and ``--write`` refuses them.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "<!-- REPORT BEGIN {name} -->"
END = "<!-- REPORT END {name} -->"
BLOCK = re.compile(r"<!-- REPORT BEGIN (?P<name>[a-z0-9-]+) -->\n(?P<body>.*?)<!-- REPORT END (?P=name) -->", re.S)
#: the stamp's line, as :func:`stamp` writes it and the tests read it back
STAMP = re.compile(r"^\*Measured by `python -m benchmarks\.report (?P<name>[a-z0-9-]+) --write`: `(?P<command>[^`]+)`;"
                   r" commit (?P<commit>[0-9a-f]{7,}(\+changes)?), (?P<date>\d{4}-\d\d-\d\d \d\d:\d\d) UTC, "
                   r"(?P<machine>[^;]+); load average (?P<before>[\d.]+) before, (?P<after>[\d.]+) after"
                   r"(?P<tiny>; TINY BUDGET, NOT FOR THE DOCS)?\.\*$", re.M)
#: the console scripts, run as modules of this interpreter (so the report needs no PATH)
SCRIPTS = {"gemenvs-train": "gemenvs.training", "gemenvs-tournament": "gemenvs.arena.tournament",
           "gemenvs-benchmark": "gemenvs.training.benchmark_cli", "gemenvs": "gemenvs"}


@dataclass(frozen=True)
class Section:
    """A measured block: its ``name``, the ``page`` that holds it, the ``command`` that measures it (as a user
    types it), the extra arguments of a tiny run, and the printed lines kept beside the tables (``keep``:
    a regular expression)."""

    name: str
    page: str
    command: str
    tiny: str
    keep: str | None = None
    #: which of the printed tables to keep (all when None), by position
    tables: tuple[int, ...] | None = None
    about: str = ""
    #: the README's short form of the block, when it has one: the table rows this matches (header kept), no lines
    readme: str | None = None
    #: pictures the command makes, copied into the docs with the block: (made, docs copy), paths from the root
    images: tuple[tuple[str, str], ...] = ()

    @property
    def pages(self) -> tuple[str, ...]:
        """The pages that hold this section's block: its page, and the README when it shows a short form."""
        return (self.page, "README.md") if self.readme else (self.page,)

    def argv(self, tiny: bool, tmp: str) -> list[str]:
        """The command to run: console scripts as ``python -m`` modules, ``{tmp}`` filled."""
        words = shlex.split(self.command + (" " + self.tiny if tiny else ""))
        words = [w.replace("{tmp}", tmp) for w in words]
        if words[0] in SCRIPTS:
            return [sys.executable, "-m", SCRIPTS[words[0]], *words[1:]]
        if words[0] == "python":
            return [sys.executable, *words[1:]]
        raise ValueError(f"section {self.name}: a command starts with python or a console script, not {words[0]!r}")


def training(name: str, config: str, run: str, tiny: str, about: str, **fields) -> Section:
    """A training run's section in docs/results.md: ``gemenvs-train CONFIG``, its final table and closing line, its
    learning curve copied to ``docs/img/RUN_curve.png`` (``run``: the config's name); tiny runs in a temporary
    run root without checkpoints."""
    return Section(name, "docs/results.md", f"gemenvs-train {config}", f"run_root={{tmp}} checkpoint_every=0 {tiny}",
                   keep=r"^done: ", about=about,
                   images=((f"runs/{run}/learning_curve.png", f"docs/img/{run}_curve.png"),), **fields)


#: the tiny budget of the MegaGem training sections (the make train recipe and its 3-, 5-player and long configs)
MEGAGEM_TINY = ("total_timesteps=20000 n_envs=64 pretrain.games=20 pretrain.dagger_games=10 pretrain.epochs=1 "
                "eval.every=10000 eval.games=10")

SECTIONS: dict[str, Section] = {s.name: s for s in [
    training("make-train", "configs/megagem/selfplay.yaml", "megagem_selfplay",
             f"{MEGAGEM_TINY} eval.final_games=10",
             "the default MegaGem run (make train) and its final table", readme=r"all \("),
    training("gem-selfplay", "configs/gem/selfplay.yaml", "gem_selfplay",
             "total_timesteps=2048 n_envs=2 ppo.n_steps=512 ppo.batch_size=256 eval.every=0 eval.final_games=6",
             "the default GEM run and its final table"),
    training("gemjam-selfplay", "configs/gemjam/selfplay.yaml", "gemjam_selfplay",
             "total_timesteps=2048 n_envs=2 ppo.n_steps=512 ppo.batch_size=256 eval.every=0 eval.final_games=6 "
             "pretrain.games=4 pretrain.epochs=1 pretrain.dagger_rounds=0",
             "the default Gem Jam run (warm start from the rule agent) and its final table"),
    training("megagem-3p", "configs/megagem/selfplay_3p.yaml", "megagem_selfplay_3p",
             f"{MEGAGEM_TINY} eval.final_games=12",
             "the make train recipe at 3 players and its final table"),
    training("megagem-5p", "configs/megagem/selfplay_5p.yaml", "megagem_selfplay_5p",
             f"{MEGAGEM_TINY} eval.final_games=10",
             "the make train recipe at 5 players and its final table"),
    training("megagem-long", "configs/megagem/selfplay_long.yaml", "megagem_selfplay_long",
             f"{MEGAGEM_TINY} eval.final_games=10",
             "the long MegaGem run (18,000,000 decisions, hours) and its final table"),
    Section("megagem-baselines", "docs/results.md",
            "python benchmarks/megagem_agents.py --games 1000",
            "--games 8",
            about="HeuristicBidder against copies of the simple baselines"),
    Section("megagem-tuned", "docs/results.md",
            "python benchmarks/megagem_tuned_eval.py --workers 2",
            "--games 10",
            about="the tuned bidder against HeuristicBidders and the other way round, per chart"),
    Section("gemjam-baselines", "docs/results.md",
            "python benchmarks/gemjam_agents.py",
            "--games 4",
            about="GemJamRuleAgent against random players"),
    Section("gemjam-lookahead", "docs/results.md",
            "python benchmarks/gemjam_lookahead.py --rows rule,lookahead,lookahead:4,lookahead_v1:1",
            "--games 2", keep=r"^Gem Jam, 3 players",
            about="the one-turn lookahead agents against two GemJamRuleAgents on the same deals"),
    Section("ismcts", "docs/results.md",
            "python benchmarks/ismcts_eval.py --games 100 --simulations 4 16 --rollout tuned",
            "--games 2 --simulations 2", keep=r"^\d players, charts",
            about="ISMCTS with tuned rollouts beside HeuristicBidder and the tuned bidder on the same deals"),
    Section("gemjam-length", "docs/gemjam.md",
            "python benchmarks/throughput.py --only-lengths --length-games 2000 --rule-games 200",
            "--length-games 3 --rule-games 1",
            about="how Gem Jam games end and how long they last, random and rule-agent play"),
    Section("env-throughput", "docs/performance.md",
            "python benchmarks/throughput.py",
            "--seconds 0.2 --length-games 0 --rule-games 0",
            keep=r"^Random masked play", tables=(0,),
            about="decisions per second of each env beside PettingZoo's classic games"),
    Section("protocol-overhead", "docs/protocol.md",
            "python benchmarks/protocol_overhead.py",
            "--seconds 0.2 --games gem",
            about="decisions per second of agents in another program over stdin/stdout beside the in-process "
                  "random agent"),
    Section("batched-engine", "docs/performance.md",
            "python benchmarks/megagem_batched.py",
            "--seconds 0.2 --batches 16",
            about="the batched MegaGem engine beside the scalar env and OpenSpiel"),
    Section("rllib-scaling", "docs/performance.md",
            "python benchmarks/rllib_scaling.py --seconds 45",
            "--seconds 5 --runners 1 --out {tmp}/rllib_scaling.png",
            images=(("docs/img/rllib_scaling.png", "docs/img/rllib_scaling.png"),),
            about="learner steps per second of backend rllib at 1, 2 and 4 env runners beside backend sb3"),
    Section("training-throughput", "docs/performance.md",
            "python benchmarks/training_throughput.py --only lean",
            "--steps 256 --warmup 64 --lean-steps 2048",
            keep=r"^lean",
            about="learner steps per second of the lean and SB3 learners beside the connect_four tutorial"),
]}


def git(*args: str) -> str:
    """The output of a git command in the repository, or '' when git cannot answer."""
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def commit() -> str:
    """The short commit of the work tree, ``+changes`` when tracked files other than the pages and pictures the
    report writes (README.md, docs/) differ from it."""
    head = git("rev-parse", "--short", "HEAD") or "0000000"
    changed = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs", ":!README.md")
    return head + ("+changes" if changed else "")


def machine() -> str:
    """System, architecture, CPU model and core count, in a few words."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cpu = re.sub(r"\s+", " ", cpu.replace(";", ",")).strip()
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores" + (f" ({cpu})" if cpu else "")


def load() -> float:
    """The one-minute load average (0 where the system has none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def stamp(section: Section, before: float, after: float, tiny: bool, when: _dt.datetime | None = None) -> str:
    """The stamp line of a block (:data:`STAMP` reads it back)."""
    when = when or _dt.datetime.now(_dt.timezone.utc)
    return (f"*Measured by `python -m benchmarks.report {section.name} --write`: `{section.command}`; "
            f"commit {commit()}, {when:%Y-%m-%d %H:%M} UTC, {machine()}; load average {before:.2f} before, "
            f"{after:.2f} after" + ("; TINY BUDGET, NOT FOR THE DOCS" if tiny else "") + ".*")


def _aligned_to_markdown(text: str) -> str:
    """``text`` with every column-aligned table (a header line, a rule of dash groups, rows up to a blank line)
    rewritten as a markdown table, the columns cut where the rule's dash groups are."""
    lines, out, k = text.splitlines(), [], 0
    while k < len(lines):
        rule = lines[k + 1] if k + 1 < len(lines) else ""
        spans = [m.span() for m in re.finditer(r"-+", rule)]
        if len(spans) >= 2 and re.fullmatch(r"[- ]+", rule) and lines[k].strip() and not lines[k].startswith("|"):
            starts = [0] + [a for a, _ in spans[1:]]
            ends = starts[1:] + [None]

            def cells(line: str) -> list[str]:
                return [line[a:b].strip() for a, b in zip(starts, ends)]

            out += ["| " + " | ".join(cells(lines[k])) + " |", "|" + "---|" * len(spans)]
            k += 2
            while k < len(lines) and lines[k].strip():
                out.append("| " + " | ".join(cells(lines[k])) + " |")
                k += 1
            continue
        out.append(lines[k])
        k += 1
    return "\n".join(out)


def extract(section: Section, text: str) -> str:
    """The tables printed in ``text`` (markdown, or column-aligned under a rule of dashes; those of
    ``section.tables``) and the lines ``section.keep`` matches, as one block body."""
    tables, current, kept = [], [], []
    for line in _aligned_to_markdown(text).splitlines():
        if line.startswith("|"):
            current.append(line.rstrip())
            continue
        if current:
            tables.append(current)
            current = []
        if section.keep and re.search(section.keep, line):
            kept.append(line.strip())
    if current:
        tables.append(current)
    tables = [t for t in tables if len(t) >= 2 and re.match(r"^\|[-:| ]+\|$", t[1])]
    if section.tables is not None:
        tables = [tables[k] for k in section.tables if k < len(tables)]
    if not tables:
        raise ReportError(f"{section.name}: `{section.command}` printed no markdown table")
    parts = ["\n".join(t) for t in tables] + ["\n".join(f"- {line}" for line in kept)] * bool(kept)
    return "\n\n".join(parts)


class ReportError(Exception):
    """A section that could not be measured or written (one line)."""


def short_form(section: Section, block: str) -> str:
    """The README's form of ``block``: each table's header and the rows ``section.readme`` matches, the stamp."""
    lines = block.splitlines()
    keep = [line for k, line in enumerate(lines) if not line.startswith("- ") and (
        not line.startswith("|") or re.match(r"^\|[-:| ]+\|$", line) or re.search(section.readme, line)
        or not (k and lines[k - 1].startswith("|")))]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(keep))


def measure(section: Section, tiny: bool = False, progress=print) -> str:
    """Run ``section``'s command and return its block (markers, tables, stamp)."""
    with tempfile.TemporaryDirectory(prefix="gemenvs-report-") as tmp:
        argv = section.argv(tiny, tmp)
        progress(f"report: {section.name}: {shlex.join(argv[1:] if argv[0] == sys.executable else argv)}"
                 + (" (tiny budget)" if tiny else ""))
        before, start = load(), time.perf_counter()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        run = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True, env=env)
        if run.returncode != 0:
            raise ReportError(f"{section.name}: `{section.command}` exited with {run.returncode}")
        body = extract(section, run.stdout)
        after = load()
    progress(f"report: {section.name}: done in {time.perf_counter() - start:.0f} s")
    return "\n".join([BEGIN.format(name=section.name), body, "", stamp(section, before, after, tiny),
                      END.format(name=section.name)])


def write(section: Section, block: str, root: Path = ROOT) -> list[Path]:
    """Put ``block`` in place of the section's block in each of its pages (each must hold the markers once; the
    README gets the short form)."""
    texts = {name: (root / name).read_text() for name in section.pages}
    for name, text in texts.items():
        found = [m for m in BLOCK.finditer(text) if m.group("name") == section.name]
        if len(found) != 1:
            raise ReportError(f"{name} has {len(found)} blocks <!-- REPORT BEGIN {section.name} --> (needs 1)")
        m = found[0]
        texts[name] = text[:m.start()] + (block if name == section.page else short_form(section, block)) + text[m.end():]
    for name, text in texts.items():
        (root / name).write_text(text)
    return [root / name for name in texts]


def blocks(text: str) -> list[tuple[str, str]]:
    """The (name, body) of every report block in ``text``."""
    return [(m.group("name"), m.group("body")) for m in BLOCK.finditer(text)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.report", description=__doc__.split("\n\n")[0])
    parser.add_argument("sections", nargs="*", metavar="SECTION", help="sections to measure (see --list)")
    parser.add_argument("--all", action="store_true", help="every section, in order")
    parser.add_argument("--list", action="store_true", help="list the sections, their pages and commands")
    parser.add_argument("--write", action="store_true", help="write each block into its page (default: print)")
    parser.add_argument("--tiny", action="store_true", help="each command on a tiny budget (a check; not written)")
    args = parser.parse_args(argv)
    if args.list:
        for s in SECTIONS.values():
            print(f"{s.name:22} {s.page:22} {s.command}\n{'':22} {s.about}")
        return 0
    unknown = [n for n in args.sections if n not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {unknown[0]!r}; the sections are {', '.join(SECTIONS)}")
    if args.tiny and args.write:
        parser.error("--tiny blocks are not written into the docs (run without --write)")
    chosen = list(SECTIONS.values()) if args.all else [SECTIONS[n] for n in args.sections]
    if not chosen:
        parser.error("name a section or --all (--list shows them)")
    for k, section in enumerate(chosen, 1):
        try:
            block = measure(section, args.tiny,
                            progress=lambda line: print(f"[{k}/{len(chosen)}] {line}", file=sys.stderr, flush=True))
            if args.write:
                for made, copy in section.images:
                    if not (ROOT / made).is_file():
                        raise ReportError(f"{section.name}: `{section.command}` made no {made}")
                    (ROOT / copy).write_bytes((ROOT / made).read_bytes())
                pages = ", ".join(str(p.relative_to(ROOT)) for p in write(section, block))
                print(f"report: wrote {section.name} into {pages}", file=sys.stderr)
            else:
                print(block + "\n")
        except ReportError as e:
            print(f"report: error: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
