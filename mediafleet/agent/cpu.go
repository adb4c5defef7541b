package agent

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockTick is USER_HZ, the unit of /proc/<pid>/stat's CPU times (100 on Linux).
const clockTick = 10 * time.Millisecond

// ProcessCPU returns a Config.CPULoad that measures this process's CPU (user and system
// time, from /proc/self/stat) as a share of the CPUs it may use (GOMAXPROCS, which
// follows a container's CPU limit): 0 idle, 1 every CPU busy. Each figure covers the
// time since the one before, at least a second (a call sooner answers the last figure),
// so that the status sent on every job change does not read a few milliseconds of noise.
// Where /proc cannot be read it answers 0, and the load is the share of job slots alone.
func ProcessCPU() func() float64 {
	var (
		mu       sync.Mutex
		lastAt   time.Time
		lastCPU  time.Duration
		lastLoad float64
	)
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		cpu, err := processCPUTime()
		if err != nil {
			return 0
		}
		now := time.Now()
		if !lastAt.IsZero() && now.Sub(lastAt) >= time.Second {
			lastLoad = min(1, max(0, float64(cpu-lastCPU)/float64(now.Sub(lastAt))/float64(runtime.GOMAXPROCS(0))))
		}
		if lastAt.IsZero() || now.Sub(lastAt) >= time.Second {
			lastAt, lastCPU = now, cpu
		}
		return lastLoad
	}
}

// processCPUTime is this process's user plus system CPU time so far.
func processCPUTime() (time.Duration, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime and stime (fields 14 and 15) from a /proc/<pid>/stat line.
// The command name (field 2) may hold spaces and parentheses; the fields after its last
// ')' are fixed.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("agent: /proc stat %q: no command name", stat)
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("agent: /proc stat: %d fields after the command name", len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("agent: /proc stat: utime %q, stime %q", f[11], f[12])
	}
	return time.Duration(utime+stime) * clockTick, nil
}
