package dynamolocal

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal makes the kernel kill the jar if the test binary dies first, so
// an interrupted test run leaves no server behind.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
