"""Secure-connection options and messages that need no server: URL parameters, the one line for a
refused permission (from messages HBase 2.6.1's AccessController really sent), and SASL/GSS
error texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from keyshape.store.hbase.acl import denied_line
from keyshape.store.hbase.auth import Security, SecurityError, _gss_message, server_principal


def test_url_parameters_parse(tmp_path: Path) -> None:
    keytab = tmp_path / "a.keytab"
    keytab.write_bytes(b"\x05\x02")
    s = Security.from_query(
        f"auth=kerberos&principal=alice&keytab={keytab}&protection=privacy"
        "&server_principal=hbase/_HOST@EXAMPLE.COM&tls=true&tls_verify_hostname=false"
    )
    assert (s.auth, s.principal, s.keytab, s.protection, s.tls, s.tls_verify_hostname) == ("kerberos", "alice", str(keytab), "privacy", True, False)
    assert Security.from_query("") == Security()


@pytest.mark.parametrize(
    "query, words",
    [
        ("auth=ntlm", "auth=simple or auth=kerberos"),
        ("auth=kerberos&protection=auth-conf", "authentication, integrity or privacy"),
        ("auth=kerberos&principal=a&keytab=/no/such", "does not exist"),
        ("auth=kerberos&keytab=/etc/hostname", "keytab needs principal"),
        ("protection=privacy", "need auth=kerberos"),
        ("tls_ca=/etc/hostname", "need tls=true"),
        ("tls=maybe", "use true or false"),
        ("tls=true&tls_key=/etc/hostname", "tls_key needs tls_cert"),
        ("keytabs=x", "unknown HBase URL option 'keytabs'"),
    ],
)
def test_bad_parameters_are_one_line(query: str, words: str) -> None:
    with pytest.raises(SecurityError) as info:
        Security.from_query(query)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_host_pattern_resolves_like_the_java_client() -> None:
    assert server_principal("hbase/_HOST@EXAMPLE.COM", "localhost") == "hbase/localhost@EXAMPLE.COM"
    assert server_principal("hbase/fixed.example.com", "localhost") == "hbase/fixed.example.com"


@pytest.mark.parametrize(
    "message, line",
    [
        (
            "Insufficient permissions (user=alice@EXAMPLE.COM, scope=default, params=[namespace=default,table=default:t1,family=f],action=CREATE)",
            "alice@EXAMPLE.COM has no CREATE on namespace 'default' (create table 't1')",
        ),
        (
            "Insufficient permissions (user=bob@EXAMPLE.COM, scope=default:t1, family=f:q, params=[table=default:t1,family=f:q],action=WRITE)",
            "bob@EXAMPLE.COM has no WRITE on table 't1' (create table 't1')",
        ),
        # a read: HBase prints the TableName, whose default namespace is left out; a table all the same
        (
            "Insufficient permissions for user 'bob' (table=sc_acl, action=READ)",
            "bob has no READ on table 'sc_acl' (create table 't1'); ask an HBase admin to grant it (HBase shell: grant 'bob', 'R', 'sc_acl')",
        ),
        (
            "Insufficient permissions for user 'bob' (table=ns1:t2, action=READ)",
            "bob has no READ on table 'ns1:t2' (create table 't1'); ask an HBase admin to grant it (HBase shell: grant 'bob', 'R', 'ns1:t2')",
        ),
        (
            "Insufficient permissions (user=bob@EXAMPLE.COM, scope=ns1, params=[namespace=ns1,table=ns1:t1,family=f],action=CREATE)",
            "bob@EXAMPLE.COM has no CREATE on namespace 'ns1' (create table 't1'); ask an HBase admin to "
            "grant it (HBase shell: grant 'bob', 'C', '@ns1')",
        ),
        (
            "Insufficient permissions (user=bob@EXAMPLE.COM, scope=GLOBAL, action=ADMIN)",
            "bob@EXAMPLE.COM has no ADMIN on the cluster (a global permission) (create table 't1'); ask an "
            "HBase admin to grant it (HBase shell: grant 'bob', 'A')",
        ),
    ],
)
def test_permission_denied_names_user_scope_and_permission(message: str, line: str) -> None:
    text = denied_line(message, "t1", "create table")
    assert line in text and "\n" not in text
    assert "grant '" in text


def test_gss_errors_keep_the_useful_status() -> None:
    assert (
        _gss_message(Exception("Major (720896): The referenced credential has expired, Minor (100001): Success"))
        == "The referenced credential has expired"
    )
    assert (
        _gss_message(
            Exception(
                "Major (851968): Unspecified GSS failure.  Minor code may provide more "
                "information, Minor (2529638919): Server not found in Kerberos database"
            )
        )
        == "Server not found in Kerberos database"
    )
