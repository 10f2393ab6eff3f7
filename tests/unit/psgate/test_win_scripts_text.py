"""What the PowerShell audit asked of the script text where no interpreter can run it (F8, F11, item 10).

These read the syntax tree or the text; winsim (lab/) implements the same contracts in Python."""

import re

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _win_scripts as win_scripts


def _code(name):
    """A script's text without its comment lines (its contract comment names what it must not do)."""
    return "\n".join(line for line in win_scripts.load(name).split("\n") if not line.lstrip().startswith("#"))


def _function(text, name):
    m = re.search(r"^function %s\b.*?^}" % re.escape(name), text, re.S | re.M)
    assert m, name
    return m.group(0)


def test_hns_call_checks_its_hresult_and_an_empty_answer():
    assert "public static extern int HNSCall(" in _code("hns_state")
    body = _function(_code("hns_calls"), "Invoke-Hns")
    assert re.search(r"\$hr = \[KubewinNodes\.\w+\]::HNSCall\(", body)
    assert re.search(r"if \(\$hr -lt 0\) \{.*?throw", body, re.S)
    assert re.search(r"if \(-not \$response\) \{ throw", body)


def test_files_and_downloads_replace_their_destination_in_one_step():
    sync = _code("node_sync")
    assert "Move-Item" not in sync and "WriteAllBytes($file.path" not in sync
    assert "WriteAllText($download.dest" not in sync
    install = _function(sync, "Install-File")
    assert "[System.IO.File]::Replace($Source, $Destination, [NullString]::Value)" in install
    assert sync.count("Install-File $tmp") == 3  # stamp file, plain download, file


def test_restricted_files_are_created_with_their_access_rules():
    loop = _code("node_sync").split("foreach ($file in $Files) {", 1)[1].split("\n}\n", 1)[0]
    created = loop.index("New-Object System.IO.FileStream($tmp, [System.IO.FileMode]::CreateNew")
    assert "$security)" in loop[created:created + 300]
    # an existing destination gets the rules before the new content replaces it
    assert loop.index("Set-Security $file.path $file.sddl") < loop.index("Install-File $tmp $file.path")
    assert "SetSecurityDescriptorSddlForm($file.sddl, 'Owner, Access')" in loop


def test_files_state_reads_the_owner_and_access_rules_and_reports_links():
    state = _code("files_state")
    assert "[string[]]$Acls" in state and "acls = $fileAccess" in state
    assert state.count("GetSecurityDescriptorSddlForm('Owner, Access')") == 1  # one Get-Security for both
    assert "-band [System.IO.FileAttributes]::ReparsePoint" in _function(state, "Get-Entry")
    # the scan (node_sync's, once the directory is secured: issue 20 N4) never descends into a link
    scan = _function(_code("node_sync"), "Find-Foreign")
    assert "if ($child.PSIsContainer -and -not $isLink) { $pending.Push($child.FullName) }" in scan


def test_missing_restricted_directories_are_created_with_their_security():
    loop = _code("node_sync").split("foreach ($dir in $Dirs) {", 1)[1].split("\n}\n", 1)[0]
    assert "[System.IO.Directory]::CreateDirectory($dir.path, $security)" in loop
    assert "SetSecurityDescriptorSddlForm($dir.sddl, 'Owner, Access')" in loop
    # an existing one: refused when a link, else owner and access rules set before anything is written
    assert loop.index("ReparsePoint") < loop.index("Set-Security $dir.path $dir.sddl")
    assert "Set-Acl" not in _code("node_sync")  # it writes back the owner Get-Acl read


def test_remove_never_follows_links():
    sync = _code("node_sync")
    tree = _function(sync, "Remove-Tree")
    link = tree.index("ReparsePoint")
    assert "[System.IO.Directory]::Delete($Path, $false)" in tree[link:link + 200]
    assert "-Recurse" not in tree
    for section in ("foreach ($path in $Remove) {", "foreach ($path in $Discard) {"):
        assert "Remove-Tree $path" in sync.split(section, 1)[1].split("\n}\n", 1)[0]
    assert "Remove-Item -LiteralPath $path -Recurse" not in sync


def test_restart_starts_the_dependents_that_were_running():
    apply = _code("service_apply")
    assert "$service.DependentServices | Where-Object Status -eq 'Running'" in apply
    start = apply.split("if ($Run -in @('start', 'restart')) {", 1)[1]
    assert start.index("Start-Service -Name $Name") < start.index("foreach ($dependent in $dependentsToStart)")


def test_files_state_never_takes_what_it_cannot_read_for_absent():
    """Review finding 1: Get-Item -ErrorAction SilentlyContinue and catch { $null } made an unreadable
    directory look missing."""
    state = _code("files_state")
    entry = _function(state, "Get-Entry")
    assert "SilentlyContinue" not in entry
    # that this typed catch can fire (Get-Item's "not found" is non-terminating without Stop) is the psgate
    # rule `catch` (tests/unit/psgate/test_psgate_semantics.py::test_typed_catches_that_cannot_fire_are_caught)
    assert "catch [System.Management.Automation.ItemNotFoundException] { return $null }" in entry
    assert "catch { return 'unreadable' }" in entry
    assert "catch { 'unreadable' }" in _function(state, "Get-Security")
    for name in ("$pathKinds[$path]", "$fileHashes[$path]", "$dirAccess[$path]", "$fileAccess[$path]"):
        assert "%s = if ($item -is [string]) { $item }" % name in state


def test_files_state_never_hashes_a_link_and_survives_a_file_it_cannot_read():
    """Review findings 3 and 5: Get-FileHash on a dangling link wrote a non-terminating error and returned
    nothing, then .Hash on null stopped files_state; a directory at a file destination reads as 'directory'."""
    loop = _code("files_state").split("foreach ($path in $Files) {", 1)[1].split("\n}\n", 1)[0]
    assert loop.index("$links.Contains($path)) { $null }") < loop.index("(Get-FileHash")
    assert "elseif ($item.PSIsContainer) { 'directory' }" in loop
    assert re.search(r"try \{ \(Get-FileHash -LiteralPath \$path -Algorithm SHA512 -ErrorAction Stop\)"
                     r"\.Hash\.ToLowerInvariant\(\) \}\s+catch \{ 'unreadable' \}", loop)


def test_the_scan_stops_at_20_hits_inside_a_directory_too():
    """Review finding 9: the cap was checked only between directories."""
    inner = _function(_code("node_sync"), "Find-Foreign").split(
        "foreach ($child in $listed) {", 1)[1]
    assert inner.lstrip().startswith("if ($hits.Count -ge 20) { break }")


def test_set_security_writes_a_new_descriptor_without_reading_the_old_one():
    """Review findings 2 and 6: reading the descriptor first failed before the takeown hint could be given,
    and takeown /R would make what others planted below Administrators' own."""
    body = _function(_code("node_sync"), "Set-Security")
    assert "GetAccessControl" not in body
    assert ("if ($item.PSIsContainer) { New-Object System.Security.AccessControl.DirectorySecurity }\n"
            "        else { New-Object System.Security.AccessControl.FileSecurity }") in body
    assert body.index("SetSecurityDescriptorSddlForm($Sddl, 'Owner, Access')") < body.index("try {")
    assert "takeown /F `\"$Path`\" /A as an administrator" in body
    assert "/R" not in body.split("throw", 1)[1]


def test_a_file_where_a_restricted_directory_goes_is_refused_before_any_rule_is_set():
    """Review finding 10: Set-Security gave a file the directory's OICI rules."""
    loop = _code("node_sync").split("foreach ($dir in $Dirs) {", 1)[1].split("\n}\n", 1)[0]
    refuse = loop.index("if (-not $item.PSIsContainer) { throw")
    assert refuse < loop.index("Set-Security $dir.path $dir.sddl")
    assert "volume mount point" in loop


def test_discard_removes_a_dangling_link_too():
    loop = _code("node_sync").split("foreach ($path in $Discard) {", 1)[1].split("\n}\n", 1)[0]
    assert "if (Get-Item -LiteralPath $path -Force -ErrorAction SilentlyContinue) { Remove-Tree $path }" in loop


def test_the_hns_scripts_carry_the_same_pinvoke():
    def pinvoke(name):
        text = win_scripts.load(name)
        start = text.index("Add-Type -Namespace KubewinNodes")
        return text[start:text.index("\n}\n", text.index("function Invoke-Hns"))]
    scripts = ("hns_state", "hns_calls", "node_health", "node_bundle")
    assert len({pinvoke(name) for name in scripts}) == 1


def test_the_docker_scripts_carry_the_same_functions():
    def functions(name):
        text = win_scripts.load(name)
        start = text.index("# docker.exe beside the service's program")
        return text[start:text.index("\n}\n", text.index("function Invoke-Docker"))]
    assert functions("docker_state") == functions("docker_apply") == functions("node_health") == functions("boot")
    for name in ("docker_state", "node_health", "boot"):
        assert "Invoke-Docker $cli @('network', 'ls', '--format', '{{.Name}}')" in _code(name)
    # review-s7 D2: Docker's own engine, not the WinRM user's DOCKER_HOST or context; D1: bounded, with a clear answer
    body = _function(_code("docker_state"), "Invoke-Docker")
    assert "$words = @('-H', 'npipe:////./pipe/docker_engine') + $Arguments" in body
    # review-s8 W6: Kill() throws InvalidOperationException when docker.exe exited just after the wait gave up
    assert ("if (-not $process.WaitForExit(60000)) {\n        try { $process.Kill() } catch {" in body
            and "\n        return @{ code = 1460;" in body)
    assert "& $Cli" not in body


def test_the_log_tail_scripts_carry_the_same_function():
    """review-s7: node_bundle's Read-Tail repeated service_apply's Read-LogTail with another limit; one text now, the
    limits its parameters."""
    def function(name):
        text = win_scripts.load(name)
        start = text.index("# The last $Lines lines of the last $Bytes bytes")
        return text[start:text.index("\n}\n", text.index("function Read-LogTail"))]
    assert function("service_apply") == function("node_bundle")
    assert "function Read-LogTail([string]$Path, [int]$Lines, [int]$Bytes) {" in function("node_bundle")
    assert "(Read-LogTail $log $WatchTailLines 65536).text" in _code("service_apply")
    assert "Read-LogTail $Path $MaxLines $MaxChars" in _function(_code("node_bundle"), "Read-Tail")


def test_the_bundle_reads_events_record_by_record():
    """review-s7 B2: -ErrorAction Stop made one unformattable record the loss of the whole log, and an empty log
    (NoMatchingEventsFound) "not collected"."""
    body = _function(_code("node_bundle"), "Read-Events")
    assert "if ($id -like 'NoMatchingEventsFound*') { return $answer }" in body
    assert "Get-WinEvent @Query -MaxEvents $MaxEvents -ErrorAction SilentlyContinue" in body
    assert "Get-WinEvent -LogName $log -MaxEvents $MaxEvents -ErrorAction Stop" not in _code("node_bundle")


def test_the_boot_script_only_starts_kube_proxy():
    """review-s6 D1: Docker's network host is made through Docker (win_docker_network), which re-creates it at its
    start after a reboot; a network the boot script made through HNS would be unknown to the running dockerd."""
    code = _code("boot")
    assert "Start-Service -Name kube-proxy" in code
    # review-s7 D3: a host network dockerd did not make again is logged with the fix, and fails the task
    assert "elseif (@($answer.output) -notcontains 'host') {" in code and "Write-BootLog \"failed: $problem\"" in code
    assert "HNSCall" not in code and "/networks/" not in code
    assert "token" not in code.lower() and "kubeconfig" not in code.lower() and ".conf" not in code.lower()


def test_each_script_file_names_itself_in_its_header():
    names = win_scripts.names()
    # service_watch went into service_apply (issue 22); boot and node_health (issue 21); node_bundle (issue 25);
    # docker_state and docker_apply (review-s6 D1); containerd_state and containerd_apply (issue 23);
    # containerd_log_rotate (issue 25, review-s8 W3); image_pull (issue 23 point 4)
    assert len(names) == 16
    for name in names:
        assert win_scripts.load(name).startswith(win_scripts.HEADER_PREFIX + name + "\n")


def test_a_directory_another_user_owns_is_refused_before_any_descriptor_is_set_by_its_name():
    """Review R2: SetAccessControl writes by name and follows a junction its owner swaps in; R10: an unreadable
    directory in the scan is named, not a raw error."""
    sync = _code("node_sync")
    loop = sync.split("foreach ($dir in $Dirs) {", 1)[1].split("\n}\n", 1)[0]
    assert loop.index("Assert-Ours $dir.path") < loop.index("Set-Security $dir.path $dir.sddl")
    assert sync.index("Assert-Ours $wanted.path") < sync.index("foreach ($dir in $Dirs) {")
    remove = sync.split("foreach ($path in $Remove) {", 1)[1]
    assert remove.index("Assert-Ours $path") < remove.index("Set-Security $path $RootSddl")
    scan = _function(sync, "Find-Foreign")
    assert "(unreadable: run takeown" in scan and "if ($child.FullName -in $Skip) { continue }" in scan


def test_the_watch_reads_log_tails_through_a_handle_that_shares_delete():
    # review-s6 L2: kube-log-runner rotates by renaming its log, which fails while a handle lacks FILE_SHARE_DELETE
    # (Get-Content's FileShare.ReadWrite); every later write of the service is then lost until it restarts
    apply = _code("service_apply")
    assert "Get-Content" not in apply
    body = _function(apply, "Read-LogTail")
    assert re.search(r"New-Object System\.IO\.FileStream\(\$Path, \[System\.IO\.FileMode\]::Open, "
                     r"\[System\.IO\.FileAccess\]::Read,\s+\(\[System\.IO\.FileShare\]::ReadWrite -bor "
                     r"\[System\.IO\.FileShare\]::Delete\)\)", body)
    assert re.search(r"try \{.*?\} finally \{ \$stream\.Dispose\(\) \}", body, re.S)
    assert "Read-LogTail $log $WatchTailLines" in apply


def test_the_support_bundle_reads_files_through_a_handle_that_shares_delete():
    # review-s7 B1: the bundle reads the live logs kube-log-runner rotates, as the watch above does (the same
    # Read-LogTail: test_the_log_tail_scripts_carry_the_same_function)
    bundle = _code("node_bundle")
    assert "Get-Content" not in bundle
    body = _function(bundle, "Read-LogTail")
    assert re.search(r"New-Object System\.IO\.FileStream\(\$Path, \[System\.IO\.FileMode\]::Open, "
                     r"\[System\.IO\.FileAccess\]::Read,\s+\(\[System\.IO\.FileShare\]::ReadWrite -bor "
                     r"\[System\.IO\.FileShare\]::Delete\)\)", body)
    assert re.search(r"try \{.*?\} finally \{ \$stream\.Dispose\(\) \}", body, re.S)


def test_node_health_reads_the_runtimes_config_dump_as_node_facts_does():
    # each script goes to the host alone, so the read is repeated; this keeps the two copies equal (the CNI directories
    # the health check judges must be the ones preflight judged)
    def block(name):
        text = win_scripts.load(name)
        start = text.index("        $dumpArgs = @()")
        end = text.index('                "error: $_"', start)
        return text[start:end]
    assert block("node_health") == block("node_facts")


def test_node_facts_reads_a_service_definition_as_service_state_does():
    """issue 22: the roles' service tasks take node_facts' read of their service instead of service_state's, so the
    two reads must be the same text (each script goes to the host alone)."""
    def function(name):
        text = win_scripts.load(name)
        start = text.index("function Get-ServiceDefinition([string]$Name) {")
        return text[start:text.index("\n}\n", start)]
    assert function("node_facts") == function("service_state")
    assert "if ($name -in $DefinitionOf) { $entry.definition = Get-ServiceDefinition $name }" in _code("node_facts")
    assert "$result = Get-ServiceDefinition $Name" in _code("service_state")


def test_the_upgrades_pod_removal_gives_each_cri_call_more_than_crictls_two_seconds():
    """review-s9 W1: crictl's --timeout defaults to 2 s per CRI call (cri-tools cmd/crictl/main.go); stopping a Windows
    pod takes longer, and the upgrade would fail after its drain."""
    assert "$rmp = @('--runtime-endpoint', $Endpoint, '--timeout', '120s', 'rmp', '--all', '--force')" in \
        _code("containerd_apply")
