# Test-lab only: Windows features (Install-WindowsFeature, what ansible.windows.win_feature runs) on a simulated host.
"""The one feature the collection installs: ``Containers``.

Sources:
- ansible.windows win_feature.ps1 (v2.x): runs ``Install-WindowsFeature -Name <names>`` and returns ``exitcode``
  (the cmdlet's ExitCode: Success, NoChangeNeeded, SuccessRestartRequired, ...), ``reboot_required`` (its
  RestartNeeded is Yes), ``success``, ``feature_result`` (one entry per feature it changed: display_name, id,
  message, reboot_required, skip_reason, success, restart_needed); ``changed`` when the cmdlet changed a feature.
- Microsoft Learn, "Prepare Windows operating system containers" / "Get started: Prep Windows for containers":
  ``Install-WindowsFeature -Name Containers`` then ``Restart-Computer -Force``: the feature needs a restart. The
  feature brings the Host Compute Service (``vmcompute``) that containerd's shim (hcsshim) calls.
- Until that restart, Get-WindowsFeature shows the feature as InstallPending. What Install-WindowsFeature answers
  then is not documented: the stricter reading here says RestartNeeded again, with nothing changed.

State: ``features`` {name: "Available" | "InstallPending" | "Installed"}; a host state without the key has every
feature it needs installed (the profiles made before this model). ``complete_at_boot`` (called by winsim_boot) makes
an InstallPending feature Installed and registers the services it brings.
"""

from __future__ import annotations

from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

KNOWN = {"Containers": {"id": 435, "display_name": "Containers"}}


def feature_state(state, name):
    features = state.get("features")
    if features is None:
        return "Installed"
    return features.get(name, "Available")


def install(state, names, check_mode=False):
    """Install-WindowsFeature -Name <names> -> the win_feature result fields."""
    results, restart, changed = [], False, False
    for name in names:
        if name not in KNOWN:
            raise SimError("winsim: Windows feature %s is not simulated (only %s)" % (name, ", ".join(KNOWN)))
        now = feature_state(state, name)
        if now == "InstallPending":
            restart = True
        elif now == "Available":
            changed = restart = True
            results.append({"display_name": KNOWN[name]["display_name"], "id": KNOWN[name]["id"], "message": [],
                            "reboot_required": True, "restart_needed": True, "skip_reason": "NotSkipped",
                            "success": True})
            if not check_mode:
                state.setdefault("features", {})[name] = "InstallPending"
    exitcode = "SuccessRestartRequired" if restart else ("Success" if changed else "NoChangeNeeded")
    return {"changed": changed, "exitcode": exitcode, "reboot_required": restart, "success": True,
            "feature_result": results}


def complete_at_boot(host):
    """The restart completes pending feature installs: Containers adds the Host Compute Service."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm
    features = host.state.get("features") or {}
    done = [n for n, s in features.items() if s == "InstallPending"]
    for name in done:
        features[name] = "Installed"
        if name == "Containers" and winsim_scm.find(host.state, "vmcompute") is None:
            from ansible_collections.ansible.windows.plugins.module_utils import winsim_binaries
            exe = r"C:\Windows\system32\vmcompute.exe"
            with open(host.local_path(exe), "w") as f:
                f.write(winsim_binaries.marker_line("vmcompute", "10.0"))
            winsim_scm.create(host.state, "vmcompute", exe, "Hyper-V Host Compute Service", start=2)
    return done
