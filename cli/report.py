"""What generation commands print when a run ends (shared by every pipeline's CLI)."""

from __future__ import annotations

import click

from dataforge.run import RunReport


def echo_run_report(report: RunReport) -> None:
    if report.dry_run:
        click.echo(f"dry run: {report.plan_note}")
        return
    if report.stale_lock and not report.stale_lock.get("alive"):
        click.echo(
            f"note: cleared a stale lock of pid {report.stale_lock.get('pid')} "
            "(that run is no longer running)",
            err=True,
        )
    m = report.manifest
    assert m is not None
    if report.already_complete:
        click.echo(
            f"{report.root}: already complete ({len(m.episodes)} episodes in "
            f"{len(m.shards)} shards); nothing to do"
        )
        return
    resumed = f", {report.already_committed} resumed" if report.already_committed else ""
    click.echo(
        f"wrote {len(m.episodes)} episodes in {len(m.shards)} shards to {report.root} "
        f"({report.committed_now} units generated{resumed}); "
        f"check it with: dataforge validate {report.root}"
    )
