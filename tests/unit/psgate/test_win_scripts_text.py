"""What the PowerShell audit asked of the script text where no interpreter can run it (F8, F11, item 10).

These read the syntax tree or the text; winsim (tests/lab) implements the same contracts in Python."""

import re

from ansible_collections.kubewin.nodes.plugins.module_utils import win_scripts


def _function(text, name):
    m = re.search(r"^function %s\b.*?^}" % re.escape(name), text, re.S | re.M)
    assert m, name
    return m.group(0)


def test_hns_call_checks_its_hresult_and_an_empty_answer():
    assert "public static extern int HNSCall(" in win_scripts.HNS_STATE
    body = _function(win_scripts.HNS_CALLS, "Invoke-Hns")
    assert re.search(r"\$hr = \[KubewinNodes\.\w+\]::HNSCall\(", body)
    assert re.search(r"if \(\$hr -lt 0\) \{.*?throw", body, re.S)
    assert re.search(r"if \(-not \$response\) \{ throw", body)


def test_files_and_downloads_replace_their_destination_in_one_step():
    sync = win_scripts.NODE_SYNC
    assert "Move-Item" not in sync and "WriteAllBytes($file.path" not in sync
    assert "WriteAllText($download.dest" not in sync
    install = _function(sync, "Install-File")
    assert "[System.IO.File]::Replace($Source, $Destination, [NullString]::Value)" in install
    assert sync.count("Install-File $tmp") == 3  # stamp file, plain download, file


def test_restricted_files_are_created_with_their_access_rules():
    loop = win_scripts.NODE_SYNC.split("foreach ($file in $Files) {", 1)[1].split("\n}\n", 1)[0]
    created = loop.index("New-Object System.IO.FileStream($tmp, [System.IO.FileMode]::CreateNew")
    assert "$security)" in loop[created:created + 300]
    # an existing destination gets the rules before the new content replaces it
    assert loop.index("Set-Security $file.path $file.sddl") < loop.index("Install-File $tmp $file.path")
    assert "SetSecurityDescriptorSddlForm($file.sddl, 'Owner, Access')" in loop


def test_files_state_reads_the_owner_and_access_rules_and_reports_links():
    state = win_scripts.FILES_STATE
    assert "[string[]]$Acls" in state and "acls = $fileAccess" in state
    assert state.count("GetSecurityDescriptorSddlForm('Owner, Access')") == 1  # one Get-Security for both
    assert "-band [System.IO.FileAttributes]::ReparsePoint" in _function(state, "Get-Entry")
    # the scan never descends into a link
    assert "if ($child.PSIsContainer -and -not $isLink) { $pending.Push($child.FullName) }" in state


def test_missing_restricted_directories_are_created_with_their_security():
    loop = win_scripts.NODE_SYNC.split("foreach ($dir in $Dirs) {", 1)[1].split("\n}\n", 1)[0]
    assert "[System.IO.Directory]::CreateDirectory($dir.path, $security)" in loop
    assert "SetSecurityDescriptorSddlForm($dir.sddl, 'Owner, Access')" in loop
    # an existing one: refused when a link, else owner and access rules set before anything is written
    assert loop.index("ReparsePoint") < loop.index("Set-Security $dir.path $dir.sddl")
    assert "Set-Acl" not in win_scripts.NODE_SYNC  # it writes back the owner Get-Acl read


def test_remove_never_follows_links():
    sync = win_scripts.NODE_SYNC
    tree = _function(sync, "Remove-Tree")
    link = tree.index("ReparsePoint")
    assert "[System.IO.Directory]::Delete($Path, $false)" in tree[link:link + 200]
    assert "-Recurse" not in tree
    for section in ("foreach ($path in $Remove) {", "foreach ($path in $Discard) {"):
        assert "Remove-Tree $path" in sync.split(section, 1)[1].split("\n}\n", 1)[0]
    assert "Remove-Item -LiteralPath $path -Recurse" not in sync


def test_restart_starts_the_dependents_that_were_running():
    apply = win_scripts.SERVICE_APPLY
    assert "$service.DependentServices | Where-Object Status -eq 'Running'" in apply
    start = apply.split("if ($Run -in @('start', 'restart')) {", 1)[1]
    assert start.index("Start-Service -Name $Name") < start.index("foreach ($dependent in $dependentsToStart)")
