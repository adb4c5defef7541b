// Package childproc runs the media fleet's server binaries (livekit-server, livekit-sip,
// redis-server) as child processes of the local stack and of tests: output to a log file,
// a process group of their own so that a Ctrl-C in the terminal reaches only the parent
// (which then stops them in order), killed if the parent dies, and their CPU time and
// resident memory read from /proc.
package childproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is a running child.
type Process struct {
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	logPath string
}

// Start runs bin with args, its standard output and error appended to a new file at
// logPath (0600). env nil keeps the parent's environment.
func Start(bin string, args []string, env []string, logPath string) (*Process, error) {
	return StartFiltered(bin, args, env, logPath, nil)
}

// StartFiltered is Start with every line of the child's output passed through filter
// before it reaches the log (nil: written as it comes). The lines go through a pipe that
// this process reads, so nothing the child prints reaches the file unfiltered; the
// process counts as exited (Done) once the child has exited and its last line is
// written.
func StartFiltered(bin string, args []string, env []string, logPath string, filter func(string) string) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	// Not CommandContext: a Stop must be able to send its own signals and wait.
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	var pr, pw *os.File
	if filter != nil {
		if pr, pw, err = os.Pipe(); err != nil {
			logFile.Close()
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = pw, pw
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		if pr != nil {
			pr.Close()
			pw.Close()
		}
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	copied := make(chan struct{})
	if filter != nil {
		pw.Close() // the child holds its own copy; EOF comes when it exits
		go func() {
			defer close(copied)
			defer pr.Close()
			CopyLines(logFile, pr, filter)
		}()
	} else {
		close(copied)
	}
	p := &Process{cmd: cmd, done: make(chan struct{}), logPath: logPath}
	go func() {
		p.waitErr = cmd.Wait()
		<-copied
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// CopyLines writes each line read from r to w through filter, until r ends (a last line
// without a newline is written too).
func CopyLines(w io.Writer, r io.Reader, filter func(string) string) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			io.WriteString(w, filter(line))
		}
		if err != nil {
			return
		}
	}
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is how the process ended; read it after Done.
func (p *Process) Err() error { return p.waitErr }

// PID is the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Signal sends sig unless the process has exited.
func (p *Process) Signal(sig os.Signal) {
	select {
	case <-p.done:
	default:
		p.cmd.Process.Signal(sig)
	}
}

// Kill kills the process and waits for it.
func (p *Process) Kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// LogPath is the file the process writes to.
func (p *Process) LogPath() string { return p.logPath }

// LogTail returns up to the last n bytes of the log.
func (p *Process) LogTail(n int64) string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// CPUTime is the CPU time (user and system) the process has used so far, at the kernel's
// clock-tick resolution (10 ms); zero once it has gone.
func (p *Process) CPUTime() time.Duration { return CPUTime(p.PID()) }

// RSS is the process's resident memory in bytes now; zero once it has gone.
func (p *Process) RSS() int64 { return RSS(p.PID()) }

// CPUTime reads a process's user and system time from /proc/<pid>/stat; zero where /proc
// has no such process.
func CPUTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces, inside parentheses): state is
	// field 3, utime field 14 and stime field 15.
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// RSS reads a process's resident set size from /proc/<pid>/status (VmRSS); zero where
// /proc has no such process.
func RSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) == 2 && f[1] == "kB" {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}

// Resolve finds a pinned server binary: bin when set (the program reads it from its
// configuration), else what the repository's scripts/<script> prints last (it builds
// once and caches).
func Resolve(ctx context.Context, bin, script string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", script))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w", script, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}

// RepoRoot walks up from the working directory to the folder holding this module's
// go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/bridgeline/bridgeline\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root not found above the working directory")
		}
		dir = parent
	}
}

// Folder makes dir (0700) for a server's config and log, or, when dir is empty, a new
// temporary folder named after prefix, which temp reports so that its Stop removes it.
func Folder(dir, prefix string) (path string, temp bool, err error) {
	if dir == "" {
		dir, err = os.MkdirTemp("", prefix+"-")
		return dir, err == nil, err
	}
	return dir, false, os.MkdirAll(dir, 0o700)
}

// KillWith kills the process when ctx ends before it exits.
func (p *Process) KillWith(ctx context.Context) {
	go func() {
		select {
		case <-ctx.Done():
			p.Kill()
		case <-p.done:
		}
	}()
}

// Stop sends drain and waits for the process to exit until ctx ends; then sends force
// and waits 5 s more; then kills it. It reports whether the process exited by itself.
func (p *Process) Stop(ctx context.Context, drain, force os.Signal) bool {
	p.Signal(drain)
	select {
	case <-p.done:
		return true
	case <-ctx.Done():
	}
	p.Signal(force)
	select {
	case <-p.done:
		return true
	case <-time.After(5 * time.Second):
	}
	p.Kill()
	return false
}
