//go:build !linux

package dynamolocal

import "os/exec"

func setParentDeathSignal(cmd *exec.Cmd) {}
