"""Checkers of network programs (ssh, scp, sftp, rsync, curl, wget, netcat)."""

from __future__ import annotations

from app.core.tools.options import OptionTable
from app.core.tools.shell.policy._helpers import _RUNS, _WRITES, Checker, _parse, _refused, _simple

# OpenSSH uses BSD getopt: no long options, stops at the first operand. ssh then restarts
# option parsing after the host name, so `ssh host -o X=y` is an option too.
_SSH = OptionTable("1 2 4 6 A a C f G g K k M N n q s T t V v X x Y y B= b= c= D= E= e= F= "
                   "I= i= J= L= l= m= O= o= P= p= Q= R= S= W= w=", permute=False)
_SSH_REFUSED = ("-o", "-F", "-S", "-E", "-I")
_SCP = OptionTable("1 2 3 4 6 A B C O p q R r T v F= i= J= l= o= P= S= X= c= D=",
                   closed=False)
_SFTP = OptionTable("1 2 4 6 A a C f N p q r v B= b= c= D= F= i= J= l= o= P= R= s= S= X=",
                    closed=False)
_RSYNC = OptionTable("e|rsh= rsync-path= config= log-file= write-batch= only-write-batch= "
                     "f|filter= B|block-size= M|remote-option= T|temp-dir= exclude= "
                     "include= exclude-from= include-from= files-from=", closed=False)
_NET_REASON = f"{_RUNS} (proxy/remote-shell commands, config files, logs and batch files)"


def _check_net_copy(name: str, args: list[str]) -> list[str]:
    if name == "ssh":
        parsed, problems = _parse(name, _SSH, args)
        if problems:
            return problems
        options = list(parsed.options)
        if parsed.operands:
            again, problems = _parse(name, _SSH, parsed.operands[1:])
            if problems:
                return problems
            options += again.options
        hit = next((o for o in options if o.name in _SSH_REFUSED), None)
        return [f"`ssh {hit}` is not allowed: {_NET_REASON}"] if hit else []
    if name == "rsync":
        return _simple(_RSYNC, ("--rsh", "--rsync-path", "--config", "--log-file",
                                "--write-batch", "--only-write-batch"), _NET_REASON)(name, args)
    table = _SFTP if name == "sftp" else _SCP
    refused = ("-o", "-F", "-S", "-D", "-b") if name == "sftp" else ("-o", "-F", "-S", "-D")
    return _simple(table, refused, _NET_REASON)(name, args)


_CURL = OptionTable(
    "o|output= O|remote-name remote-name-all output-dir= K|config= D|dump-header= "
    "c|cookie-jar= trace= trace-ascii= libcurl= stderr= etag-save= hsts= alt-svc= "
    "w|write-out= A|user-agent= b|cookie= C|continue-at= d|data= e|referer= E|cert= F|form= "
    "H|header= m|max-time= P|ftp-port= Q|quote= r|range= T|upload-file= t|telnet-option= "
    "u|user= U|proxy-user= x|proxy= X|request= y|speed-time= Y|speed-limit= z|time-cond= "
    "data-raw= data-binary= data-urlencode= url= connect-timeout= retry=", closed=False)
_CURL_REFUSED = ("--output", "--remote-name", "--remote-name-all", "--output-dir", "--config",
                 "--dump-header", "--cookie-jar", "--trace", "--trace-ascii", "--libcurl",
                 "--stderr", "--etag-save", "--hsts", "--alt-svc")


def _check_curl(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _CURL, args)
    if problems:
        return problems
    why = f"{_WRITES}; output is returned to you (or use web_fetch)"
    hit = _refused(name, parsed, _CURL_REFUSED, why)
    if hit:
        return hit
    # --write-out's %output{FILE} (curl 8.3+) writes a file.
    if any("output{" in v for v in parsed.values("--write-out")):
        return [f"`curl -w %output{{...}}` is not allowed: {why}"]
    return []


_WGET = OptionTable(
    "e|execute= o|output-file= a|append-output= config= P|directory-prefix= save-cookies= "
    "warc-file= i|input-file= post-file= body-file= O|output-document= r|recursive m|mirror "
    "p|page-requisites B|base= t|tries= T|timeout= w|wait= U|user-agent= header= "
    "user= password= post-data= method= body-data= l|level= A|accept= R|reject= "
    "D|domains= X|exclude-directories= I|include-directories= Q|quota=", closed=False)
_WGET_REFUSED = ("--execute", "--output-file", "--append-output", "--config",
                 "--directory-prefix", "--save-cookies", "--warc-file", "--input-file",
                 "--post-file", "--body-file", "--recursive", "--mirror", "--page-requisites")


def _check_wget(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _WGET, args)
    if problems:
        return problems
    hit = _refused(name, parsed, _WGET_REFUSED, "it runs wgetrc commands or writes files")
    if hit:
        return hit
    documents = [o for o in parsed.options if o.name == "--output-document"]
    bad = next((o for o in documents if o.value != "-"), None)
    if bad is not None:
        return [f"`wget {bad} {bad.value}` is not allowed: {_WRITES}; use `wget -O - URL` or "
                "web_fetch"]
    if not documents:
        return [f"wget saves to a file by default, which is not allowed: {_WRITES}; use "
                "`wget -qO- URL` or the web_fetch tool"]
    return []


# netcat variants disagree on which letters take values, so only the refused ones are declared.
_NC = OptionTable("e|exec= c|sh-exec= lua-exec= o|output= x|hex-dump=", closed=False)


def _check_nc(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _NC, args)
    if problems:
        return problems
    return (_refused(name, parsed, ("--exec", "--sh-exec", "--lua-exec"), _RUNS)
            or _refused(name, parsed, ("--output", "--hex-dump"), _WRITES))


NETWORK_CHECKERS: dict[str, Checker] = {
    "ssh": _check_net_copy,
    "scp": _check_net_copy,
    "sftp": _check_net_copy,
    "rsync": _check_net_copy,
    "curl": _check_curl,
    "wget": _check_wget,
    "nc": _check_nc,
    "ncat": _check_nc,
    "netcat": _check_nc,
}
