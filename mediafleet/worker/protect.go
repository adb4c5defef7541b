package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// protector keeps ECS task scale-in protection on while the worker has calls, through
// the ECS agent's task-protection endpoint, so that scale-in and deployments stop only
// idle workers. (A stopped worker drains, but Fargate kills it 120 s after SIGTERM:
// protection is what keeps longer calls alive.)
type protector struct {
	url     string // ${ECS_AGENT_URI}/task-protection/v1/state
	http    *http.Client
	log     *slog.Logger
	want    chan bool
	renew   time.Duration // re-send while protected, before ExpiresInMinutes lapses
	expires int           // minutes
}

func newProtector(agentURI string, log *slog.Logger) *protector {
	return &protector{
		url:     strings.TrimSuffix(agentURI, "/") + "/task-protection/v1/state",
		http:    &http.Client{Timeout: 5 * time.Second},
		log:     log,
		want:    make(chan bool, 1),
		renew:   30 * time.Minute,
		expires: 60,
	}
}

// set asks for protection on or off; the latest wish wins, and it never blocks.
func (p *protector) set(on bool) {
	for {
		select {
		case p.want <- on:
			return
		default:
		}
		select {
		case <-p.want:
		default:
		}
	}
}

func (p *protector) run(ctx context.Context) {
	var on, known bool
	renew := time.NewTicker(p.renew)
	defer renew.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case w := <-p.want:
			if known && w == on {
				continue
			}
			if err := p.put(ctx, w); err != nil {
				p.log.Warn("task protection", "enabled", w, "err", err)
				continue
			}
			on, known = w, true
		case <-renew.C:
			if on {
				if err := p.put(ctx, true); err != nil {
					p.log.Warn("task protection renewal", "err", err)
				}
			}
		}
	}
}

func (p *protector) put(ctx context.Context, on bool) error {
	body := map[string]any{"ProtectionEnabled": on}
	if on {
		body["ExpiresInMinutes"] = p.expires
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, p.url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}
