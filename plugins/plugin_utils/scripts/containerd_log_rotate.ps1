# kubewin.nodes script: containerd_log_rotate
# Contract: no parameters, no result. Not run by a module: the scheduled task kubewin-containerd-log (roles/runtime)
# runs this file, C:\Program Files\containerd\kubewin-log-rotate.ps1, with powershell.exe -File at boot and every hour
# after. It reads its settings from kubewin-log-rotate.json beside it (win_containerd writes both: log_file,
# max_size_mb, max_files). When containerd's --log-file has reached max_size_mb MiB, the copies <name>-1<ext> ..
# <name>-<max_files><ext> beside it move up by one (the last is removed), the log is copied to <name>-1<ext> and
# truncated: containerd keeps the file open sharing read and write but not delete (Go syscall.Open), so it cannot be
# renamed while containerd runs, and containerd writes with O_APPEND, so its next line goes to the start of the
# truncated file (Microsoft Learn, CreateFileW, FILE_APPEND_DATA). Lines written between the copy and the truncation
# are lost. The copy is streamed (Stream.CopyTo), never read into one string: a .NET string holds about 1 billion
# characters at most (Microsoft Learn, String class), so ReadToEnd failed once the log passed about 1 GiB. The
# truncation goes through a second handle opened for writing, shared as containerd shares it. It reads no credential;
# a failure ends it with exit code 1 (the task's last result).
param()
$ErrorActionPreference = 'Stop'

$settings = [System.IO.File]::ReadAllText('C:\Program Files\containerd\kubewin-log-rotate.json') | ConvertFrom-Json
$log = [string]$settings.log_file
$maxFiles = [int]$settings.max_files
$source = $null
if (Test-Path -LiteralPath $log -PathType Leaf) {
    # Shared as containerd shares it (read and write), the only way to open a file another process writes.
    $source = New-Object System.IO.FileStream($log, [System.IO.FileMode]::Open, [System.IO.FileAccess]::Read, `
        [System.IO.FileShare]::ReadWrite)
    if ($source.Length -lt [long]$settings.max_size_mb * 1048576) {
        $source.Dispose()
        $source = $null
    }
}
if ($null -ne $source) {
    try {
        $stem = $log.Substring(0, $log.Length - 4)  # containerd's log is named *.log (win_containerd)
        if (Test-Path -LiteralPath "$stem-$maxFiles.log" -PathType Leaf) {
            Remove-Item -LiteralPath "$stem-$maxFiles.log" -Force
        }
        $older = if ($maxFiles -gt 1) { ($maxFiles - 1)..1 } else { @() }  # the newest copy is -1
        foreach ($i in $older) {
            if (Test-Path -LiteralPath "$stem-$i.log" -PathType Leaf) {
                [System.IO.File]::Move("$stem-$i.log", "$stem-$($i + 1).log")
            }
        }
        $copy = New-Object System.IO.FileStream("$stem-1.log", [System.IO.FileMode]::Create, `
            [System.IO.FileAccess]::Write, [System.IO.FileShare]::None)
        try { $source.CopyTo($copy) } finally { $copy.Dispose() }
        $truncate = New-Object System.IO.FileStream($log, [System.IO.FileMode]::Open, [System.IO.FileAccess]::Write, `
            [System.IO.FileShare]::ReadWrite)
        try { $truncate.SetLength(0) } finally { $truncate.Dispose() }
    } finally { $source.Dispose() }
}
