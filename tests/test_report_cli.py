"""`copal report` and `copal export` through the CLI: JSON keys and types, the four report
formats, manifests with correct checksums, byte-stable exports, CSV round trip, LaTeX structure,
plots, and the JSONL export kept as it was."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from copal_tui.export.formats import latex_escape
from copal_tui.export.tables import report_tables
from store.migrations.apply import latest
from tests.test_metrics_fixture import build_fixture


@pytest.fixture
def fixture_db(tmp_path: Path) -> Path:
    return build_fixture(tmp_path)


def _ok(result):
    assert result.exit_code == 0, result.output
    return result


RATE_KEYS = {"model": str, "n": int, "errors": int, "error_rate": float, "ci_low": float,
             "ci_high": float, "by_pattern": dict, "by_facet": dict}


def test_report_json_keys_and_types(cli, fixture_db):
    doc = json.loads(_ok(cli("report", "--json", "--bootstrap", "50", db=fixture_db)).stdout)
    for key in ("error_rates", "overall_error_rate", "facet_atlas", "one_sided",
                "paired_contrast", "ablation", "judge_validity", "human_agreement",
                "judge_sensitivity", "corrected_error_rates", "corpus", "exclusions", "scope"):
        assert key in doc, key
    for row in doc["error_rates"]:
        for key, kind in RATE_KEYS.items():
            assert isinstance(row[key], kind), key
        for cell in row["by_pattern"].values():
            assert set(cell) >= {"n", "errors", "error_rate"}
            assert 0 <= cell["error_rate"] <= 1
    assert set(doc["error_rates"][0]["by_pattern"]) <= {
        "scope_restriction", "prerequisite_gating", "selective_disclosure", "workflow_transfer"}
    for row in doc["paired_contrast"]:
        assert set(row) >= {"model", "single_error_rate", "composed_error_rate",
                            "composition_induced_rate", "n"}
    for row in doc["judge_validity"]:
        assert set(row) >= {"judge", "mode", "n", "tp", "fp", "tn", "fn", "agreement",
                            "precision", "recall", "f1", "fn_rate", "fp_rate", "kappa", "ci"}
        assert all(isinstance(row[k], int) for k in ("n", "tp", "fp", "tn", "fn"))
        assert set(row["ci"]["kappa"]) >= {"low", "high"}
    for row in doc["judge_sensitivity"]:
        assert set(row) >= {"judge", "error_rate", "ranking", "kendall_tau", "spearman_rho",
                            "max_shift"}
        assert isinstance(row["ranking"], list)
    assert isinstance(doc["overall_error_rate"], float)


def _nulls_have_reasons(node, path="$"):
    allowed = {"primary_judge", "reference_judge"}
    if isinstance(node, dict):
        for key, value in node.items():
            if value is None and key not in allowed:
                assert f"{key}_reason" in node or "reason" in node, f"{path}.{key}"
            _nulls_have_reasons(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            assert value is not None, f"{path}[{i}]"
            _nulls_have_reasons(value, f"{path}[{i}]")


def test_json_has_no_nan_and_every_null_has_a_reason(cli, fixture_db):
    text = _ok(cli("report", "--json", "--bootstrap", "50", db=fixture_db)).stdout
    assert "NaN" not in text and "Infinity" not in text
    doc = json.loads(text)
    _nulls_have_reasons(doc)
    pair = next(p for p in doc["human_agreement"]["pairwise"] if p["annotator_b"] == "cat")
    assert pair["kappa"] is None and "one class" in pair["kappa_reason"]


def test_empty_database_reports_without_failing(cli, initialised):
    doc = json.loads(_ok(cli("report", "--json")).stdout)
    assert doc["error_rates"] == [] and doc["scope"]["primary_judge"] is None
    assert doc["overall_error_rate"] is None and doc["overall_error_rate_reason"]
    _nulls_have_reasons(doc)
    _ok(cli("report"))


def test_terminal_and_stdout_formats(cli, fixture_db):
    terminal = _ok(cli("report", "--bootstrap", "20", db=fixture_db)).stdout
    # The terminal shows the export tables (their titles) besides its own pivots.
    for title in ("Error rates on composed items", "Error rate by pattern (rows)",
                  "Facet atlas", "Paired contrast", "Controls", "Judge validity",
                  "Confusion matrices", "Human agreement", "Judge-family sensitivity",
                  "Rogan-Gladen", "Corpus profile", "Exclusions"):
        assert title in terminal
    # The controls and the ablation are shown pooled over targets (models A and B); the
    # exports break them down by model as well.
    controls = terminal[terminal.index("Controls"):terminal.index("Judge validity")]
    assert "(pooled)" in controls
    assert not re.search(r"│ [AB] +│", controls)
    md = _ok(cli("report", "--format", "md", "--bootstrap", "20", db=fixture_db)).stdout
    assert md.startswith("# copal report") and "| model | n | errors |" in md
    stream = _ok(cli("report", "--format", "csv", "--bootstrap", "20", db=fixture_db)).stdout
    # (click's test runner turns CRLF into LF on stdout; the files are checked for CRLF below)
    # The models behind the figures come first (this fixture was imported: no runs).
    assert stream.startswith("# provenance\nsuite,generator,verifier,prefilter,targets,judges,"
                             "imported,heuristic,caveat,options,removed\n")
    assert "# error_rates\nmodel,n,errors,error_rate,ci_low,ci_high\n" in stream
    tex = _ok(cli("report", "--format", "latex", "--bootstrap", "20", db=fixture_db)).stdout
    assert tex.startswith("\\documentclass") and tex.rstrip().endswith("\\end{document}")
    both = cli("report", "--json", "--format", "md", db=fixture_db)
    assert both.exit_code == 2 and "not both" in both.stderr


def test_bad_options_are_one_line_errors(cli, fixture_db):
    for args in (["--world", "nope"], ["--judge", "nobody"], ["--reference-judge", "x@contract"]):
        result = cli("report", "--json", *args, db=fixture_db)
        assert result.exit_code == 2, args
        assert "Traceback" not in result.stderr


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("fmt", ["csv", "json", "md", "latex", "jsonl"])
def test_export_writes_files_and_manifest_with_checksums(cli, fixture_db, tmp_path, fmt):
    out = tmp_path / f"out-{fmt}"
    out.mkdir()
    # --bootstrap is the report's: the store's jsonl export refuses it.
    bootstrap = [] if fmt == "jsonl" else ["--bootstrap", "50"]
    _ok(cli("export", "--format", fmt, "--out", str(out), *bootstrap, db=fixture_db))
    manifest = json.loads((out / "manifest.json").read_text())
    listed = {f["path"]: f for f in manifest["files"]}
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert on_disk == set(listed) | {"manifest.json"}
    for rel, entry in listed.items():
        assert entry["sha256"] == _sha(out / rel) and entry["bytes"] == (out / rel).stat().st_size
    assert manifest["quick_check"] == "ok"
    assert manifest["schema_version"] == latest()
    assert manifest["tool"]["version"]
    assert manifest["annotators"] == ["ana", "ben", "cat"]
    assert manifest["label_set"]["labels"] == 16 and manifest["label_set"]["adjudications"] == 1
    assert "litellm_version" in manifest and "prompt_versions" in manifest
    assert "created_at" in manifest and manifest["format"] == fmt
    if fmt != "jsonl":
        reasons = {e["reason"] for e in manifest["exclusions"]}
        assert any("tie" in r for r in reasons)
        assert manifest["label_set"]["reference_labels"]["ties_excluded"] == 1


def test_same_database_same_bytes_except_created_at(cli, fixture_db, tmp_path):
    runs = []
    for n in (1, 2):
        out = tmp_path / f"run{n}"
        _ok(cli("export", "--format", "csv", "--out", f"{out}/", db=fixture_db))
        _ok(cli("export", "--format", "json", "--out", str(out / "json") + "/", db=fixture_db))
        runs.append(out)
    files = sorted(p.relative_to(runs[0]) for p in runs[0].rglob("*") if p.is_file())
    assert len(files) > 10
    for rel in files:
        a, b = (runs[0] / rel).read_bytes(), (runs[1] / rel).read_bytes()
        if rel.name == "manifest.json":
            strip = re.compile(rb'"created_at": "[^"]*"')
            assert strip.sub(b"", a) == strip.sub(b"", b)
        else:
            assert a == b, rel


def test_csv_files_round_trip_headers_and_types(cli, fixture_db, tmp_path):
    from copal_tui.metrics.options import ReportOptions
    from copal_tui.services.report import build_document
    from store.db import connect

    out = tmp_path / "csv"
    _ok(cli("export", "--format", "csv", "--out", f"{out}/", db=fixture_db))
    tables = report_tables(build_document(connect(fixture_db), ReportOptions()))
    for table in tables:
        raw = (out / f"{table.name}.csv").read_bytes()
        assert not raw.startswith(b"\xef\xbb\xbf")  # UTF-8 without a BOM
        assert b"\r\n" in raw and b"\n" not in raw.replace(b"\r\n", b"")
        rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
        assert rows[0] == [name for name, _kind in table.columns]
        assert len(rows) - 1 == len(table.rows)
        for got, want in zip(rows[1:], table.rows, strict=True):
            assert len(got) == len(table.columns)
            for cell, value, (_name, kind) in zip(got, want, table.columns, strict=True):
                if cell == "":
                    assert value is None or value != value or (kind == "str" and value == "")
                elif kind == "int":
                    assert int(cell) == value
                elif kind == "float":
                    assert float(cell) == pytest.approx(value, abs=5e-7)
                elif kind == "bool":
                    assert cell in ("true", "false") and (cell == "true") == value
                else:
                    assert cell == str(value)


def test_latex_escaping_and_structure(cli, fixture_db, tmp_path):
    assert latex_escape(r"a&b%c$d#e_f{g}h~i^j\k") == (
        r"a\&b\%c\$d\#e\_f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k")
    out = tmp_path / "tex"
    _ok(cli("export", "--format", "latex", "--out", f"{out}/", db=fixture_db))
    tex = (out / "report.tex").read_text()
    body = re.sub(r"\\[&%$#_{}]", "", tex)  # drop escaped specials before counting
    assert body.count("{") == body.count("}")
    assert tex.count("\\begin{longtable}") == tex.count("\\end{longtable}") > 5
    assert "_" not in body and "%" not in body and "#" not in body  # all escaped
    blocks = re.findall(r"\\begin\{longtable\}\{((?:[^{}]|\{[^{}]*\})*)\}(.*?)"
                        r"\\end\{longtable\}", tex, re.S)
    assert len(blocks) == tex.count("\\begin{longtable}")
    for spec, rows in blocks:
        n_cols = len(re.findall(r"p\{[^}]*\}|[lrc]", spec))
        for row in rows.splitlines():
            if row.endswith(r"\\"):
                cells = re.sub(r"\\&", "", row)
                assert cells.count("&") == n_cols - 1, row


def test_latex_compiles(cli, fixture_db, tmp_path):
    import os
    import shutil

    if shutil.which("pdflatex") is None:
        # CI installs pdflatex (.ci/run), so there the compile is always checked.
        assert not os.environ.get("CI"), "CI must have pdflatex"
        pytest.skip("pdflatex is not installed (escaping and structure are tested above)")
    out = tmp_path / "tex"
    _ok(cli("export", "--format", "latex", "--out", f"{out}/", db=fixture_db))
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                           "report.tex"], cwd=out, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]


def test_jsonl_file_export_is_unchanged_and_folder_gets_manifest(cli, fixture_db, tmp_path):
    file_out = tmp_path / "all.jsonl"
    result = _ok(cli("export", "--format", "jsonl", "--out", str(file_out), db=fixture_db))
    assert "record(s)" in result.stderr and not (tmp_path / "manifest.json").exists()
    folder = tmp_path / "folder"
    folder.mkdir()
    _ok(cli("export", "--format", "jsonl", "--out", str(folder), db=fixture_db))
    assert (folder / "store.jsonl").read_bytes() == file_out.read_bytes()
    assert json.loads((folder / "manifest.json").read_text())["files"][0]["path"] == "store.jsonl"
    clash = cli("export", "--format", "csv", "--out", str(file_out), db=fixture_db)
    assert clash.exit_code == 2 and "folder" in clash.stderr


def test_plots_written_as_png_and_svg(cli, fixture_db, tmp_path):
    import matplotlib  # noqa: F401 - in the test extra: the plots are always exercised
    plots = tmp_path / "plots"
    _ok(cli("report", "--json", "--bootstrap", "20", "--plots", str(plots), db=fixture_db))
    names = sorted(p.name for p in plots.iterdir())
    for stem in ("error_heatmap", "facet_atlas", "paired_contrast",
                 "confusion_j1_contract", "confusion_j2_contract"):
        assert f"{stem}.png" in names and f"{stem}.svg" in names
    assert (plots / "error_heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = tmp_path / "with-plots"
    _ok(cli("export", "--format", "md", "--plots", "--out", f"{out}/", db=fixture_db))
    listed = [f["path"] for f in json.loads((out / "manifest.json").read_text())["files"]]
    assert "plots/error_heatmap.svg" in listed


def test_missing_matplotlib_is_a_clear_error(cli, fixture_db, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    result = cli("report", "--plots", str(tmp_path / "p"), db=fixture_db)
    assert result.exit_code == 1
    assert "pip install 'copal[plots]'" in result.stderr and "Traceback" not in result.stderr


def test_report_modules_import_no_ui_llm_or_heavy_libraries():
    code = (
        "import sys\n"
        "import copal_tui.commands.report_cmds, copal_tui.services.report\n"
        "import copal_tui.services.export, copal_tui.export.terminal, copal_tui.export.plots\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in\n"
        "             ('textual', 'litellm', 'sklearn', 'scipy', 'matplotlib'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
