//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts a process of check --procs in a process group of its own: a Ctrl-C at the
// terminal reaches the parent only, which stops each process once and still merges their reports.
func ownProcessGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }
