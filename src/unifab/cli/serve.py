"""``unifab serve``: the single pane (store, ingest, REST API, web UI, /metrics); ``serve token create``.

FastAPI, uvicorn and SQLAlchemy are the ``serve`` extra and are imported inside the commands only, so
``unifab --help`` neither pays for them nor needs them installed. docs/serve.md.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from unifab.cli.common import fail, record_cache

__all__ = ["PushOption", "TokenFileOption", "check_tls", "push_or_fail", "push_token", "serve_app", "serve_demo"]

PushOption = Annotated[
    str | None,
    typer.Option(
        "--push",
        metavar="URL",
        help="Also send the bundle to a unifab serve at URL (token: $UNIFAB_TOKEN or --token-file).",
    ),
]
TokenFileOption = Annotated[
    Path | None, typer.Option("--token-file", help="File holding the token for --push (default: $UNIFAB_TOKEN).")
]

DB_HELP = "Store: a SQLite file path (default ./unifab-serve.db, WAL) or a URL such as postgresql://host/db."
MISSING = "unifab serve needs its extra: pip install 'unifab[serve]' ({error})"

serve_app = typer.Typer(
    help="The single pane: a store, ingest, REST API, web UI and /metrics over a fabric.\n\n"
    "Example: unifab serve --bundle ./b1 --port 8080",
    invoke_without_command=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
token_app = typer.Typer(
    help="API tokens (roles: viewer, operator, agent, admin).\n\nExample: unifab serve token create --role viewer",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
serve_app.add_typer(token_app, name="token")


@serve_app.callback()
def serve(
    ctx: typer.Context,
    db: Annotated[str, typer.Option("--db", envvar="UNIFAB_DB", help=DB_HELP)] = "unifab-serve.db",
    bundle: Annotated[
        Path | None, typer.Option("--bundle", help="A bundle directory to ingest at start-up (once: it is idempotent).")
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on.")] = 8080,
    max_upload_mb: Annotated[int, typer.Option(min=1, help="Largest upload accepted, in MiB (gzipped).")] = 256,
    private_metrics: Annotated[
        bool, typer.Option("--private-metrics", help="Require a reading token for /metrics too.")
    ] = False,
    tls_cert: Annotated[
        Path | None, typer.Option("--tls-cert", help="Serve HTTPS with this PEM certificate (chain); needs --tls-key.")
    ] = None,
    tls_key: Annotated[Path | None, typer.Option("--tls-key", help="The PEM private key of --tls-cert.")] = None,
    cache: Annotated[
        Path | None,
        typer.Option(
            "--cache",
            metavar="DIR",
            help="Keep parsed device records in DIR; a restart reuses those whose content is unchanged "
            "(default: $UNIFAB_CACHE_DIR or ~/.cache/unifab/records).",
        ),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Parse every device at each load; keep no cache.")
    ] = False,
) -> None:
    """Serve the fabric: ingest snapshots, keep findings over time, show them to people, programs and Prometheus.

    Example: unifab serve --bundle ./b1 --port 8080

    Example: unifab serve --db postgresql://db.example/unifab --host 0.0.0.0

    Example: unifab serve --tls-cert /etc/unifab/cert.pem --tls-key /etc/unifab/key.pem --port 8443

    A restart reads each device the store holds through the parsed-record cache (keyed by the device's
    content), so an unchanged fleet loads in little more than a hash per device; --no-cache parses all.
    """
    if ctx.invoked_subcommand is not None:
        return
    tls = check_tls(tls_cert, tls_key)
    try:
        import uvicorn

        from unifab.serve.app import create_app
        from unifab.serve.service import Settings
    except ImportError as exc:
        fail(MISSING.format(error=exc))
    from unifab.errors import UnifabError

    if bundle is not None and not bundle.is_dir():
        fail(f"bundle not found: {bundle}")
    settings = Settings(
        db=db,
        bundle=bundle,
        max_upload_bytes=max_upload_mb * 1024 * 1024,
        metrics_public=not private_metrics,
        cache=record_cache(None, cache, no_cache),
    )
    try:
        app = create_app(settings)
    except UnifabError as exc:
        fail(str(exc))
    except Exception as exc:  # the database cannot be reached or migrated: one line, not a traceback
        fail(f"cannot open the store {db}: {exc.__class__.__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    scheme = "https" if tls else "http"
    typer.echo(f"unifab serve: {scheme}://{host}:{port}/ (store {db})", err=True)
    certfile, keyfile = tls or (None, None)
    uvicorn.run(app, host=host, port=port, log_level="info", ssl_certfile=certfile, ssl_keyfile=keyfile)


def check_tls(cert: Path | None, key: Path | None) -> tuple[str, str] | None:
    """uvicorn's ``ssl_certfile`` and ``ssl_keyfile`` for ``--tls-cert``/``--tls-key`` (``None``: plain HTTP).

    The pair is loaded once here (exit 2 with one line when a file is missing, unreadable, not PEM, encrypted,
    or the key is not the certificate's), so a bad file is named at start-up, not at every handshake."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        fail("--tls-cert and --tls-key go together: give both (or neither, and terminate TLS in a reverse proxy)")
    import ssl

    for option, path in (("--tls-cert", cert), ("--tls-key", key)):
        if not path.is_file():
            fail(f"{option} {path}: no such file")
        try:
            path.read_bytes()
        except OSError as exc:
            fail(f"{option} {path}: cannot read it: {exc.strerror or exc}")
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=str(cert))
    except ssl.SSLError as exc:
        fail(f"--tls-cert {cert}: not a PEM certificate ({exc.reason or exc})")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)

    def no_passphrase() -> str:
        raise ValueError("the key is encrypted; give an unencrypted PEM key (openssl pkey -in KEY -out KEY2)")

    try:
        context.load_cert_chain(str(cert), str(key), password=no_passphrase)
    except ValueError as exc:
        fail(f"--tls-key {key}: {exc}")
    except ssl.SSLError as exc:
        if exc.reason == "KEY_VALUES_MISMATCH":
            fail(f"--tls-key {key}: not the private key of the certificate in --tls-cert {cert}")
        fail(f"--tls-key {key}: not a PEM private key ({exc.reason or exc})")
    return str(cert), str(key)


@token_app.command("create")
def token_create(
    role: Annotated[str, typer.Option("--role", help="viewer (read), operator (read, ingest), agent (ingest), admin.")],
    name: Annotated[str, typer.Option("--name", help="What the token is for (shown in the audit log).")] = "",
    host: Annotated[
        list[str] | None,
        typer.Option("--host", help="Limit the token to ingesting this host's files (repeatable; for agents)."),
    ] = None,
    db: Annotated[str, typer.Option("--db", envvar="UNIFAB_DB", help=DB_HELP)] = "unifab-serve.db",
) -> None:
    """Create an API token and print it once (only its argon2 hash is stored).

    Example: unifab serve token create --role agent --host gpu001 --name gpu001-agent

    Example: unifab serve token create --role viewer --db postgresql://db.example/unifab
    """
    try:
        from unifab.serve.auth import ROLES
    except ImportError as exc:
        fail(MISSING.format(error=exc))
    if role not in ROLES:
        fail(f"unknown role {role!r}; roles are {', '.join(ROLES)}")
    from unifab.serve.ingest import DEVICE_NAME

    bad = [h for h in host or () if not DEVICE_NAME.fullmatch(h)]
    if bad:
        fail(f"--host {bad[0]!r}: not a host name (letters, digits, '-', '_', '.')")
    server = _open(db)
    try:
        made = server.create_token(role, name, "cli", host or None)
    finally:
        server.close()
    typer.echo(made.token)
    scope = f", hosts {', '.join(sorted(set(host)))} only" if host else ""
    typer.echo(f"token {made.id} ({role}{scope}) created; it is shown only now", err=True)


@token_app.command("revoke")
def token_revoke(
    token_id: Annotated[str, typer.Argument(help="The token's id (the part after ufb_, as the audit log shows).")],
    db: Annotated[str, typer.Option("--db", envvar="UNIFAB_DB", help=DB_HELP)] = "unifab-serve.db",
) -> None:
    """Revoke a token: every server on this store refuses it from the next request on.

    Example: unifab serve token revoke 3f9a0c1d2e4b
    """
    server = _open(db)
    try:
        revoked = server.revoke_token(token_id, "cli")
    finally:
        server.close()
    if not revoked:
        fail(f"no live token {token_id!r} in {db}")
    typer.echo(f"token {token_id} revoked", err=True)


def _open(db: str) -> Any:
    try:
        from unifab.serve.service import Server, Settings
    except ImportError as exc:
        fail(MISSING.format(error=exc))
    try:
        return Server(Settings(db=db), load=False)
    except Exception as exc:
        fail(f"cannot open the store {db}: {exc.__class__.__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")


def push_token(url: str | None, token_file: Path | None) -> str | None:
    """The token for ``--push`` (read before any work, so a missing one fails at once); None without --push."""
    if url is None:
        return None
    from unifab.serve.client import PushError, read_token, snapshots_url

    try:
        snapshots_url(url)
        return read_token(token_file)
    except PushError as exc:
        fail(str(exc))


def push_or_fail(url: str | None, token: str | None, bundle: Path, parts: list[str] | None = None) -> None:
    """``--push``: send the bundle (or ``parts`` of it) and say what the server stored; exit 2 when it did not."""
    if url is None or token is None:
        return
    from unifab.errors import UnifabError
    from unifab.serve.client import PushError, push_directory

    try:
        doc = push_directory(url, bundle, token, parts)
    except (PushError, UnifabError) as exc:
        fail(str(exc))
    state = "already stored" if doc.get("duplicate") else f"stored, {doc.get('mode')}"
    sys.stderr.write(f"unifab: pushed {bundle} to {url}: snapshot {doc.get('id')} ({state})\n")


def serve_demo(root: Path, bundle: Path, host: str, port: int) -> None:
    """``unifab demo --serve``: the demo twin in an embedded store under ``root``, a viewer token, the UI.

    Ctrl-C stops it (exit 0); the store stays in ``root`` with the rest of the demo.
    """
    try:
        import uvicorn

        from unifab.serve.app import create_app
        from unifab.serve.service import Settings
    except ImportError as exc:
        fail(MISSING.format(error=exc))
    db = root / "serve.db"
    app = create_app(Settings(db=str(db), bundle=bundle))
    made = app.state.server.create_token("viewer", "unifab demo", "cli")
    url = f"http://{host}:{port}/"
    # plain lines (not the console's), so a long token is never wrapped
    typer.echo(f"\nServing the demo: {url}  (store {db}; Ctrl-C stops)")
    typer.echo(f"Viewer token (paste it into the login form): {made.token}", color=False)
    sys.stdout.flush()
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn stops cleanly on SIGINT, then re-raises it
        uvicorn.run(app, host=host, port=port, log_level="warning")
    typer.echo("unifab demo: stopped", err=True)
