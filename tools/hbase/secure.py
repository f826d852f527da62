#!/usr/bin/env python3
"""A throw-away MIT Kerberos realm on loopback and a secured standalone HBase (Kerberos with every
protection level, authorization with the AccessController, TLS beside plaintext).

Usage: python tools/hbase/secure.py start|stop   (run folder: tools/hbase/run/secure, or
KEYSHAPE_HBASE_RUN_DIR). `start` prints the environment clients need (KRB5_CONFIG) and the
keyshape URL. Ports: KEYSHAPE_HBASE_ZK_PORT, _MASTER_PORT, _RS_PORT, _THRIFT_PORT and
KEYSHAPE_HBASE_KDC_PORT when set, else free ones (so it runs beside a plain instance on the
defaults); `stop` finds them in the run folder. Everything listens on loopback only.
Everything lives in the run folder: kdc/ (database, krb5.conf, keytabs, kdc.log),
tls/ (a test CA and a certificate for localhost/127.0.0.1), and HBase's own conf/data/logs.

Needs Debian's krb5-kdc, krb5-admin-server and krb5-user (kdb5_util, kadmin.local, krb5kdc) and
openssl. Principals: hbase/localhost (the server), alice and bob (users), each with a keytab.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import standalone

REALM = "EXAMPLE.COM"
SERVER_PRINCIPAL = f"hbase/localhost@{REALM}"
USERS = ("alice", "bob")
SHORT_LIVED = "carol"
ENCTYPES = "aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal"


def _tool(name: str) -> str:
    for folder in ("", "/usr/sbin/", "/usr/bin/"):
        path = shutil.which(name) if not folder else (folder + name if Path(folder + name).exists() else None)
        if path:
            return path
    raise standalone.StartFailed("kdc", f"{name} not found; install Debian's krb5-kdc krb5-admin-server krb5-user", None)


@dataclass
class KDC:
    """An MIT KDC for realm EXAMPLE.COM on a free loopback port (TCP and UDP), listening on
    127.0.0.1 only."""

    root: Path
    port: int = field(default_factory=standalone.free_port)

    krb5_conf = property(lambda self: self.root / "krb5.conf")
    kdc_conf = property(lambda self: self.root / "kdc.conf")
    pid_file = property(lambda self: self.root / "krb5kdc.pid")
    log = property(lambda self: self.root / "kdc.log")

    def keytab(self, user: str) -> Path:
        return self.root / f"{user.split('/')[0]}.keytab"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "KRB5_CONFIG": str(self.krb5_conf), "KRB5_KDC_PROFILE": str(self.kdc_conf)}

    def write_krb5_conf(self, port: int) -> None:
        # rdns/dns_canonicalize_hostname off: "localhost" must stay "localhost" (this VM's
        # /etc/hosts gives 127.0.0.1 other names); udp_preference_limit=1: TCP only.
        self.krb5_conf.write_text(
            "[libdefaults]\n"
            f"  default_realm = {REALM}\n  dns_lookup_kdc = false\n  dns_lookup_realm = false\n"
            "  rdns = false\n  dns_canonicalize_hostname = false\n  udp_preference_limit = 1\n"
            "  ticket_lifetime = 10h\n  renew_lifetime = 1d\n  forwardable = true\n"
            f"[realms]\n  {REALM} = {{\n    kdc = 127.0.0.1:{port}\n    admin_server = 127.0.0.1:{port}\n  }}\n"
            f"[domain_realm]\n  localhost = {REALM}\n"
        )

    def start(self) -> None:
        self.stop()
        if self.root.exists():
            shutil.rmtree(self.root)
        self.root.mkdir(parents=True)
        self.write_krb5_conf(self.port)
        # kdc_listen/kdc_tcp_listen with an address (MIT 1.15+): the ports alone would bind
        # 0.0.0.0 and [::], i.e. every interface.
        listen = f"127.0.0.1:{self.port}"
        self.kdc_conf.write_text(
            f"[kdcdefaults]\n  kdc_listen = {listen}\n  kdc_tcp_listen = {listen}\n"
            f"[realms]\n  {REALM} = {{\n"
            f"    database_name = {self.root}/principal\n    key_stash_file = {self.root}/stash\n"
            f"    acl_file = {self.root}/kadm5.acl\n    admin_keytab = {self.root}/kadm5.keytab\n"
            f"    kdc_listen = {listen}\n    kdc_tcp_listen = {listen}\n"
            f"    max_life = 10h\n    max_renewable_life = 1d\n"
            f"    supported_enctypes = {ENCTYPES}\n  }}\n"
            f"[logging]\n  kdc = FILE:{self.log}\n"
        )
        (self.root / "kadm5.acl").write_text("")
        self._run(_tool("kdb5_util"), "create", "-s", "-r", REALM, "-P", "keyshape-test-master")
        for principal in (SERVER_PRINCIPAL, *USERS, SHORT_LIVED):
            # SHORT_LIVED's tickets last seconds: tests of credentials renewed from a keytab.
            life = ' -maxlife "4 seconds"' if principal == SHORT_LIVED else ""
            self.kadmin(f"addprinc -randkey{life} {principal}")
            self.kadmin(f"ktadd -k {self.keytab(principal)} {principal}")
        log = open(self.root / "krb5kdc.out", "ab")
        p = subprocess.Popen(
            [_tool("krb5kdc"), "-n", "-r", REALM],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.pid_file.write_text(f"{p.pid}\n")
        deadline = time.monotonic() + 20
        while not standalone._port_open(self.port):
            if p.poll() is not None or time.monotonic() > deadline:
                raise standalone.StartFailed("kdc", "krb5kdc did not listen", self.root / "krb5kdc.out")
            time.sleep(0.1)

    def kadmin(self, query: str) -> None:
        self._run(_tool("kadmin.local"), "-r", REALM, "-q", query)

    def _run(self, *cmd: str) -> None:
        done = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise standalone.StartFailed("kdc", f"{' '.join(cmd[:3])} failed: {done.stderr.strip()[:300]}", None)

    def stop(self) -> None:
        try:
            pid = int(self.pid_file.read_text())
        except (OSError, ValueError):
            return
        if standalone._pid_alive(pid):
            os.kill(pid, signal.SIGTERM)
            standalone._wait_gone(pid, 10)
        self.pid_file.unlink(missing_ok=True)


def make_tls(root: Path) -> dict[str, Path]:
    """A test CA, a server certificate for localhost/127.0.0.1, a client certificate, and a
    certificate for another host (to prove hostname verification); PEM files in ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    openssl = shutil.which("openssl") or "openssl"

    def run(*args: str) -> None:
        done = subprocess.run([openssl, *args], cwd=root, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise standalone.StartFailed("tls", f"openssl {args[0]} failed: {done.stderr.strip()[:300]}", None)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=keyshape test CA")
    for name, san in (("server", "DNS:localhost,IP:127.0.0.1"), ("client", "DNS:localhost,IP:127.0.0.1"), ("other", "DNS:other.example.com")):
        run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}")
        (root / f"{name}.ext").write_text(f"subjectAltName={san}\n")
        run(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            f"{name}.pem",
            "-days",
            "2",
            "-extfile",
            f"{name}.ext",
        )
    # HBase's PEM keystore: the PKCS#8 private key and the certificate chain in one file,
    # readable by its owner only, as openssl leaves the .key files (created so, never widened).
    keystore = root / "server-keystore.pem"
    keystore.unlink(missing_ok=True)
    fd = os.open(keystore, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write((root / "server.key").read_text() + (root / "server.pem").read_text())
    return {n: root / f"{n}.pem" for n in ("ca", "server", "client", "other")} | {"client_key": root / "client.key", "other_key": root / "other.key"}


@dataclass
class SecureStandalone(standalone.Standalone):
    """``standalone.Standalone`` with Kerberos (all three protection levels), authorization and
    TLS (plaintext still accepted); ``kdc`` must be started first."""

    kdc: KDC | None = None
    protection: str = "privacy,integrity,authentication"
    authorization: bool = True
    # tls_only: the server refuses plaintext and NEEDs a client certificate; SIMPLE clients are
    # then let in too (fallback), so one instance serves "TLS alone" and "TLS with Kerberos".
    tls_only: bool = False
    # allow_simple: unauthenticated (SIMPLE) clients are let in too, e.g. to compare them with
    # Kerberos on one server (hbase.ipc.server.fallback-to-simple-auth-allowed).
    allow_simple: bool = False

    tls_dir = property(lambda self: self.run_dir / "tls")

    def site_properties(self) -> dict[str, str]:
        assert self.kdc is not None
        props = super().site_properties()
        keytab = str(self.kdc.keytab(SERVER_PRINCIPAL))
        access = "org.apache.hadoop.hbase.security.access.AccessController"
        props.update(
            {
                "hadoop.security.authentication": "kerberos",
                "hbase.security.authentication": "kerberos",
                "hbase.security.authorization": str(self.authorization).lower(),
                "hbase.master.kerberos.principal": f"hbase/_HOST@{REALM}",
                "hbase.master.keytab.file": keytab,
                "hbase.regionserver.kerberos.principal": f"hbase/_HOST@{REALM}",
                "hbase.regionserver.keytab.file": keytab,
                "hbase.rpc.protection": self.protection,
                "hbase.server.netty.tls.enabled": "true",
                "hbase.server.netty.tls.supportplaintext": str(not self.tls_only).lower(),
                "hbase.server.netty.tls.client.auth.mode": "NEED" if self.tls_only else "WANT",
                "hbase.server.netty.tls.verify.client.hostname": "false",
                "hbase.rpc.tls.keystore.location": str(self.tls_dir / "server-keystore.pem"),
                "hbase.rpc.tls.keystore.type": "PEM",
                "hbase.rpc.tls.truststore.location": str(self.tls_dir / "ca.pem"),
                "hbase.rpc.tls.truststore.type": "PEM",
            }
        )
        if self.authorization:
            props.update(
                {
                    "hbase.coprocessor.master.classes": access,
                    "hbase.coprocessor.region.classes": access,
                    "hbase.coprocessor.regionserver.classes": access,
                }
            )
        if self.tls_only:
            # The region server reaches the master over RPC inside the JVM: it must speak TLS too.
            props["hbase.client.netty.tls.enabled"] = "true"
        if self.tls_only or self.allow_simple:
            props["hbase.ipc.server.fallback-to-simple-auth-allowed"] = "true"
        return props

    def write_config(self) -> None:
        super().write_config()
        # Hadoop's UserGroupInformation reads core-site.xml, not hbase-site.xml: without this the
        # server never logs in from its keytab.
        (self.conf_dir / "core-site.xml").write_text(
            '<?xml version="1.0"?>\n<configuration>\n'
            "  <property><name>hadoop.security.authentication</name><value>kerberos</value></property>\n"
            "  <property><name>hadoop.security.authorization</name><value>true</value></property>\n"
            "</configuration>\n"
        )
        if not (self.tls_dir / "server-keystore.pem").exists():
            make_tls(self.tls_dir)
        else:  # made by an older version, readable by all
            (self.tls_dir / "server-keystore.pem").chmod(0o600)

    def _java_cmd(self, name: str, log_file: str, main: str, *args: str) -> list[str]:
        assert self.kdc is not None
        cmd = super()._java_cmd(name, log_file, main, *args)
        cmd.insert(1, f"-Djava.security.krb5.conf={self.kdc.krb5_conf}")
        return cmd

    def secure_url(self, **params: str) -> str:
        query = "&".join(f"{k}={v}" for k, v in params.items())
        return f"hbase://127.0.0.1:{self.zk_port}" + (f"?{query}" if query else "")

    def tls_params(self) -> dict[str, str]:
        return {
            "tls": "true",
            "tls_ca": str(self.tls_dir / "ca.pem"),
            "tls_cert": str(self.tls_dir / "client.pem"),
            "tls_key": str(self.tls_dir / "client.key"),
        }

    def admin_url(self) -> str:
        """The server's own principal: HBase's superuser (creates tables, grants)."""
        assert self.kdc is not None
        return self.secure_url(
            auth="kerberos", principal=SERVER_PRINCIPAL, keytab=str(self.kdc.keytab(SERVER_PRINCIPAL)), **(self.tls_params() if self.tls_only else {})
        )

    def round_trip(self) -> None:
        from keyshape.schema.specs import FamilySpec, TableSpec
        from keyshape.store.hbase import HBaseStore

        with HBaseStore.from_url(self.admin_url(), retries=0) as store:
            table = standalone.PROBE_TABLE.decode()
            if store.table_exists(table):
                store.delete_table(table)
            store.create_table(TableSpec(table, families=[FamilySpec("f")]))
            store.put(table, b"probe", {b"f:q": b"v"})
            if store.get(table, b"probe") != {b"f:q": b"v"}:
                raise RuntimeError("probe row did not read back")
            store.delete_table(table)

    def is_ready(self) -> bool:
        try:
            self.round_trip()
        except Exception:
            return False
        return True

    def stop(self, keep_data: bool = False, timeout: float = 60.0) -> None:
        # HMaster's "stop" command is a Java client that would need its own Kerberos login.
        # A throw-away instance is simply killed (its data is deleted anyway, unless keep_data).
        if keep_data:
            self._stop_pid(self.master_pid_file, timeout=0)
        else:
            self.kill()
        if not keep_data and self.data_dir.exists():
            shutil.rmtree(self.data_dir)


PORTS = ("zk_port", "master_port", "rs_port", "thrift_port")


def env_ports() -> dict[str, int]:
    """The ports KEYSHAPE_HBASE_{ZK,MASTER,RS,THRIFT,KDC}_PORT set (as ``secure_instance`` and
    ``KDC`` name them); the command line honours them, test fixtures take free ports."""
    out = {}
    for name in (*PORTS, "kdc_port"):
        port = standalone._env_port(f"KEYSHAPE_HBASE_{name.split('_')[0].upper()}_PORT", 0)
        if port:
            out[name] = port
    return out


def secure_instance(run_dir: Path, kdc: KDC, **options: object) -> SecureStandalone:
    """A ``SecureStandalone`` on free loopback ports in ``run_dir`` (not started)."""
    run_dir = run_dir.resolve()
    # Ports given in ``options`` (zk_port=...) are used, the others are free ones.
    ports = {name: options.pop(name, None) or standalone.free_port() for name in PORTS}
    return SecureStandalone(run_dir=run_dir, kdc=kdc, **ports, **options)  # type: ignore[arg-type]


def start_secure(run_dir: Path, timeout: float = 300.0, kdc: KDC | None = None, **options: object) -> SecureStandalone:
    """A secured standalone HBase on free loopback ports, and a KDC unless ``kdc`` (started)
    is given; the caller calls ``stop_secure``. ``options``: SecureStandalone's fields."""
    run_dir = run_dir.resolve()
    own_kdc = kdc is None
    kdc = kdc or KDC(run_dir / "kdc")
    instance = secure_instance(run_dir, kdc, **options)
    instance.stop()
    if own_kdc:
        kdc.start()
    os.environ["KRB5_CONFIG"] = str(kdc.krb5_conf)  # the Python client (MIT libs) reads it
    try:
        instance.start(timeout=timeout)
    except standalone.StartFailed:
        instance.kill()
        if own_kdc:
            kdc.stop()
        raise
    return instance


def stop_secure(instance: SecureStandalone, stop_kdc: bool = True) -> None:
    instance.stop()
    if stop_kdc and instance.kdc is not None:
        instance.kdc.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cmd", choices=["start", "stop"])
    args = ap.parse_args(argv)
    run_dir = Path(os.environ.get("KEYSHAPE_HBASE_RUN_DIR", standalone.HERE / "run" / "secure"))
    ports_file = run_dir / "ports.txt"
    if args.cmd == "stop":
        # The ports it was started on (not the defaults, which may be another instance's).
        try:
            saved = dict(zip((*PORTS, "kdc_port"), map(int, ports_file.read_text().split())))
        except (OSError, ValueError):
            saved = env_ports()
        old_kdc = KDC(run_dir / "kdc", **({"port": saved.pop("kdc_port")} if "kdc_port" in saved else {}))
        inst = SecureStandalone(run_dir=run_dir, kdc=old_kdc, **saved)  # type: ignore[arg-type]
        stop_secure(inst)
        ports_file.unlink(missing_ok=True)
        print("secure HBase and KDC stopped")
        return 0
    kdc: KDC | None = None
    try:
        ports = env_ports()
        if "kdc_port" in ports:  # start_secure starts a KDC itself only on a free port
            kdc = KDC(run_dir.resolve() / "kdc", port=ports.pop("kdc_port"))
            kdc.start()
        inst = start_secure(run_dir, kdc=kdc, **ports)
    except (standalone.StartFailed, ValueError) as e:
        if kdc is not None:
            kdc.stop()
        print(e, file=sys.stderr)
        return 2
    assert inst.kdc is not None
    ports_file.write_text(f"{inst.zk_port} {inst.master_port} {inst.rs_port} {inst.thrift_port} {inst.kdc.port}\n")
    print(
        f"export KRB5_CONFIG={inst.kdc.krb5_conf}\n"
        f"keyshape URL: {inst.secure_url(auth='kerberos', keytab=str(inst.kdc.keytab('alice')), principal='alice')}\n"
        f"stop with: python tools/hbase/secure.py stop (ports {inst.zk_port}/{inst.master_port}/{inst.rs_port})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
