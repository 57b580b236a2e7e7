#!/usr/bin/env python3
"""Draws the plots of BENCHMARKS.md from the JSON files in docs/plots/data/.

    python3 scripts/plots.py            # data/*.json -> docs/plots/*.svg
    python3 scripts/plots.py --measure  # first re-run the native benches into data/

The native files are `specula bench ... --json` output, written by the commands in
NATIVE below (--measure runs them; SPECULA names the binary, default
`$CARGO_TARGET_DIR/release/specula` or `target/release/specula`, which
`cargo build --release -p specula-cli` builds). The other files hold figures recorded
elsewhere (headless Chromium, criterion), each with the command that produced them.

matplotlib (pinned below) is installed on first use into a venv of its own,
$SPECULA_PLOTS_VENV or ~/.cache/specula/plots-venv; the script then runs itself there.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

MATPLOTLIB = "matplotlib==3.11.2"
ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "plots" / "data"
OUT = ROOT / "docs" / "plots"

# data file -> `specula` arguments (each writes one `specula bench --json` report).
NATIVE = {
    "goals-1.json": "bench --repeat 3 --json",
    "goals-2.json": "bench --repeat 3 --json",
    "spectr-L4.json": "bench --repeat 100 --gammas 4 --drafts 2,4,8 --gamma 4 --kls 0.1 --json",
    "spectr-L6.json": "bench --repeat 100 --gammas 6 --drafts 4 --gamma 6 --kls 0.1 --json",
    "spectr-L8.json": "bench --repeat 100 --gammas 8 --drafts 4 --gamma 8 --kls 0.1 --json",
    # SmolLM2-135M-Instruct and its trained draft on 20 held-out chat prompts; the target's
    # path comes from scripts/smollm2-reference.sh, the prompts file from
    # `cargo run --release -p specula-train --example onpolicy_prompts -- held-out 20`.
    "smollm2-draft.json": "bench --target $SPECULA_SMOLLM2_GGUF --draft models/smollm2-draft.gguf "
                          "--prompts $SPECULA_HELD_OUT_PROMPTS --methods speculative "
                          "--gammas 1,2,3,4,5,6 --tokens 64 --repeat 1 --temperature 0.7 --json",
}


def ensure_venv():
    """Re-runs this script inside the plotting venv, creating it if needed."""
    venv = Path(os.environ.get("SPECULA_PLOTS_VENV",
                               Path.home() / ".cache" / "specula" / "plots-venv"))
    if Path(sys.prefix).resolve() == venv.resolve():
        return
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    try:
        subprocess.run([str(python), "-c", f"import importlib.metadata as m; "
                        f"assert m.version('matplotlib') == '{MATPLOTLIB.split('==')[1]}'"],
                       check=True, stderr=subprocess.DEVNULL)
    except subprocess.CalledProcessError:
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", MATPLOTLIB], check=True)
    os.execv(str(python), [str(python), __file__, *sys.argv[1:]])


def measure():
    target = os.environ.get("CARGO_TARGET_DIR", ROOT / "target")
    specula = os.environ.get("SPECULA", str(Path(target) / "release" / "specula"))
    for name, args in NATIVE.items():
        print(f"specula {args} > {DATA / name}", file=sys.stderr)
        with open(DATA / name, "w") as out:
            argv = [os.path.expandvars(a) for a in args.split()]
            subprocess.run([specula, *argv], stdout=out, check=True, cwd=ROOT)


def load(name):
    with open(DATA / name) as f:
        return json.load(f)


def rows(report, method, selection=None):
    """The rows of one method; for SpecTr, of one selection rule (params `selection=`)."""
    return [r for r in report["rows"] if r["method"] == method
            and (selection is None or f"selection={selection}" in r["params"].split())]


def param(row, key):
    """The value of `key` in a row's params, e.g. gamma in 'gamma=4' or K in 'K=4 L=4'."""
    return float(dict(p.split("=") for p in row["params"].split())[key])


def speedup_vs_gamma(plt):
    """(a) Measured speedup of speculative decoding against γ, beside the theory."""
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for i, name in enumerate(sorted(n for n in NATIVE if n.startswith("goals"))):
        spec = rows(load(name), "speculative")
        g = [param(r, "gamma") for r in spec]
        run = f"run {i + 1}"
        ax.plot(g, [r["theoreticalFactor"] for r in spec], "--", color=f"C{i}",
                label=f"theory (verification = 1 step), {run}")
        ax.plot(g, [r["costedFactor"] for r in spec], ":", color=f"C{i}",
                label=f"costed (measured verification cost), {run}")
        ax.plot(g, [r["speedup"] for r in spec], "o-", color=f"C{i}", label=f"measured, {run}")
        if i == 0:
            ax.plot(g, [0.85 * r["theoreticalFactor"] for r in spec], "-.", color="grey",
                    lw=0.8, label="goal: 85 % of theory (run 1)")
    ax.axhline(2.0, color="grey", lw=0.8)
    ax.text(4.6, 1.92, "goal: best γ ≥ 2.0×", color="grey", fontsize=8)
    ax.set(xlabel="γ (drafted tokens per round)", ylabel="speedup over autoregressive",
           title="Speculative decoding, native CPU (one thread)")
    ax.legend(fontsize=7)
    return fig


def smollm2_block_efficiency(plt):
    """(e) Tokens per round of SmolLM2's trained draft against γ, beside the theory for two
    acceptances measured apart from it: at γ = 1 in the same run (accepted ÷ drafted), and
    the held-out expected acceptance its training recorded (models/smollm2-draft.json)."""
    spec = rows(load("smollm2-draft.json"), "speculative")
    g = [param(r, "gamma") for r in spec]
    with open(ROOT / "models" / "smollm2-draft.json") as f:
        held_out = json.load(f)["held_out"][-1][1]["acceptance"]
    at_one = next(r["acceptanceRate"] for r in spec if param(r, "gamma") == 1)
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.plot(g, [r["blockEfficiency"] for r in spec], "o-", label="measured")
    for alpha, how, style in ((at_one, "measured at γ = 1", "--"),
                              (held_out, "held-out, from training", ":")):
        ax.plot(g, [(1 - alpha ** (x + 1)) / (1 - alpha) for x in g], style,
                label=f"theory (1 − α^(γ+1)) / (1 − α), α = {alpha:.3f} ({how})")
    ax.set(xlabel="γ (drafted tokens per round)", ylabel="tokens per round",
           title="SmolLM2-135M with its trained draft, T = 0.7, held-out prompts")
    ax.legend(fontsize=8)
    return fig


def spectr_vs_k(plt):
    """(b) SpecTr's block efficiency against K for k-Seq and the optimal selection."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 4))
    l4 = load("spectr-L4.json")
    base = rows(l4, "speculative")[0]["blockEfficiency"]
    for selection, label, color in (("kseq", "k-Seq (--selection kseq)", "C0"),
                                    ("race", "optimal selection (--selection race)", "C1")):
        pts = [(1, base)] + [(param(r, "K"), r["blockEfficiency"])
                             for r in rows(l4, "spectr", selection)]
        left.plot(*zip(*pts), "o-", color=color, label=label)
    left.axhline(1.15 * base, color="grey", lw=0.8, ls="--")
    left.text(1, 1.15 * base + 0.02, "1.15 × speculative γ = 4 (goal at K = 4)",
              color="grey", fontsize=8)
    left.set(xscale="log", xticks=[1, 2, 4, 8], xticklabels=["1", "2", "4", "8"],
             xlabel="K i.i.d. drafts (K = 1: speculative γ = 4)",
             ylabel="block efficiency (tokens per target call)",
             title=f"L = 4, {l4['repeat']} runs per prompt")
    left.minorticks_off()
    left.legend(fontsize=8)
    lengths, kseq, race = [], [], []
    for name in ("spectr-L4.json", "spectr-L6.json", "spectr-L8.json"):
        r = load(name)
        spec = rows(r, "speculative")[0]
        lengths.append(param(spec, "gamma"))
        pick = lambda sel: next(x for x in rows(r, "spectr", sel)
                                if param(x, "K") == 4)["blockEfficiency"]
        kseq.append(pick("kseq") / spec["blockEfficiency"])
        race.append(pick("race") / spec["blockEfficiency"])
    right.plot(lengths, kseq, "o-", color="C0", label="k-Seq")
    right.plot(lengths, race, "o-", color="C1", label="optimal selection")
    right.axhline(1.15, color="grey", lw=0.8, ls="--")
    right.text(lengths[-1], 1.148, "goal 1.15×", color="grey", fontsize=8, ha="right", va="top")
    right.set(xticks=lengths, xlabel="draft length L (= γ of speculative decoding)",
              ylabel="SpecTr K = 4 ÷ speculative, block efficiency",
              title="K = 4 against one draft of the same length")
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig


def browser(plt):
    """(c) Tokens per second in headless Chromium, by backend (bars: mean of the runs' medians;
    dots: each run)."""
    runs = load("browser.json")["backends"]
    fig, axes = plt.subplots(1, len(runs), figsize=(4 * len(runs), 4))
    for ax, run in zip(axes, runs):
        if "tokensPerSecond" in run:
            tps = run["tokensPerSecond"]
        else:  # recorded as speedups over autoregressive decoding in the same run
            ar = run["autoregressive"]
            tps = {"autoregressive": ar}
            tps.update({m: [a * s for a, s in zip(ar, x)] for m, x in run["speedup"].items()})
        methods = list(tps)
        mean = [sum(tps[m]) / len(tps[m]) for m in methods]
        bars = ax.bar(range(len(methods)), mean, color=[f"C{i}" for i in range(len(methods))])
        for i, m in enumerate(methods):
            ax.plot([i] * len(tps[m]), tps[m], "k.", ms=4)
        for bar, t in zip(bars, mean):
            ax.text(bar.get_x() + bar.get_width() / 2, t, f"{t / mean[0]:.2f}×",
                    ha="center", va="bottom", fontsize=8)
        ax.axhline(1.5 * mean[0], color="grey", lw=0.8, ls="--")
        ax.text(-0.4, 1.5 * mean[0], "goal 1.5×", color="grey", fontsize=7, va="bottom")
        ax.set_xticks(range(len(methods)), methods, rotation=30, ha="right", fontsize=8)
        ax.set_title(run["backend"], fontsize=10)
        ax.set_ylabel("tokens per second (median of the repeats)")
        ax.margins(y=0.15)
    fig.tight_layout()
    return fig


def scheme_cost(plt):
    """(d) Per-position cost of each token-level scheme, in units of the one-pass floor."""
    data = load("schemes.json")
    sizes = list(data["ns"])
    schemes = [s for s in data["ns"][sizes[0]] if not s.startswith("floor")]
    fig, ax = plt.subplots(figsize=(7.5, 4))
    width = 0.8 / len(sizes)
    for j, v in enumerate(sizes):
        cost = data["ns"][v]
        ratios = [cost[s] / cost["floor, plain"] for s in schemes]
        ax.bar([i + (j - (len(sizes) - 1) / 2) * width for i in range(len(schemes))],
               ratios, width, label=f"V = {int(v):,}", color=f"C{j}")
    for i, s in enumerate(schemes):
        if s in data["goal_x_floor"]:
            g = data["goal_x_floor"][s]
            ax.plot([i - 0.45, i + 0.45], [g, g], color="red", lw=1.5)
    ax.plot([], [], color="red", label="goal (× floor, V = 32,000)")
    ax.axhline(1, color="black", lw=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(schemes)), schemes, fontsize=8)
    ax.set(ylabel="cost ÷ plain one-pass floor (Σ min(p, q))",
           title="Token-level schemes, per position (criterion medians)")
    ax.legend(fontsize=8)
    return fig


def main():
    ensure_venv()
    if "--measure" in sys.argv[1:]:
        measure()
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"svg.hashsalt": "specula", "svg.fonttype": "none"})
    for name, draw in (("speedup-vs-gamma", speedup_vs_gamma), ("spectr-vs-k", spectr_vs_k),
                       ("browser-tokens-per-second", browser), ("scheme-cost", scheme_cost),
                       ("smollm2-block-efficiency", smollm2_block_efficiency)):
        fig = draw(plt)
        fig.savefig(OUT / f"{name}.svg", metadata={"Date": None}, bbox_inches="tight")
        plt.close(fig)
        print(f"wrote {(OUT / name).relative_to(ROOT)}.svg", file=sys.stderr)


if __name__ == "__main__":
    main()
