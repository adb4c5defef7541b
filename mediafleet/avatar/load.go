package avatar

import (
	"context"
	"fmt"
	"image"
	"io"
	"net/http"
	"sync"

	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Sheet is a customer's character sheet, read and decoded, ready for NewSheetScene.
type Sheet struct {
	Avatar avatars.Avatar
	Images map[string]image.Image
}

// LoadSheet reads each part of s from its URL (at most avatars.MaxFileBytes each) and
// decodes it with the same checks the upload passed.
func LoadSheet(ctx context.Context, hc *http.Client, s persona.AvatarSheet) (Sheet, error) {
	out := Sheet{Avatar: avatars.Avatar{ID: s.ID}, Images: map[string]image.Image{}}
	for _, p := range s.Parts {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
		if err != nil {
			return Sheet{}, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return Sheet{}, fmt.Errorf("avatar %s part %s: %w", s.ID, p.Name, err)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, avatars.MaxFileBytes+1))
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return Sheet{}, fmt.Errorf("avatar %s part %s: HTTP %d %v", s.ID, p.Name, resp.StatusCode, err)
		}
		img, part, err := avatars.DecodePart(p.Name, b)
		if err != nil {
			return Sheet{}, fmt.Errorf("avatar %s: %w", s.ID, err)
		}
		part.Anchor = avatars.Point{X: p.X, Y: p.Y}
		out.Avatar.Parts = append(out.Avatar.Parts, part)
		out.Images[p.Name] = img
	}
	if out.Images[avatars.PartBase] == nil {
		return Sheet{}, fmt.Errorf("avatar %s: the sheet has no base", s.ID)
	}
	return out, nil
}

// SheetCache keeps the sheets a worker loaded, by avatar id: an avatar never changes
// once created, so a sheet read once serves every later call that uses it.
type SheetCache struct {
	mu     sync.Mutex
	sheets map[string]Sheet
	order  []string
}

// sheetCacheSize bounds the sheets kept (each is at most a few MB decoded).
const sheetCacheSize = 16

// Get returns the cached sheet of id.
func (c *SheetCache) Get(id string) (Sheet, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sheets[id]
	return s, ok
}

// Put keeps s, dropping the oldest past the bound.
func (c *SheetCache) Put(s Sheet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sheets == nil {
		c.sheets = map[string]Sheet{}
	}
	if _, ok := c.sheets[s.Avatar.ID]; ok {
		return
	}
	c.sheets[s.Avatar.ID] = s
	c.order = append(c.order, s.Avatar.ID)
	if len(c.order) > sheetCacheSize {
		delete(c.sheets, c.order[0])
		c.order = c.order[1:]
	}
}
