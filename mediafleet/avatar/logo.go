package avatar

import (
	"bytes"
	"fmt"
	"image"
	"sync"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
)

// DecodeLogo decodes an account's logo file for the connecting screen, with the checks
// its upload passed (account.ParseLogo: a PNG, JPEG or WebP of at most 256 KiB and 1024
// pixels a side), so that no file the control plane hands out costs the worker more.
func DecodeLogo(data []byte) (image.Image, error) {
	if _, err := account.ParseLogo(data, time.Time{}); err != nil {
		return nil, fmt.Errorf("logo: %w", err)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("logo: %w", err)
	}
	return img, nil
}

// LogoCache keeps the logos a worker decoded, by account, with the hash of the file
// (persona.Brand.Logo): a job naming another hash (the logo changed) reads it again.
type LogoCache struct {
	mu    sync.Mutex
	logos map[string]cachedLogo
	order []string
}

type cachedLogo struct {
	sha string
	img image.Image
}

// logoCacheSize bounds the logos kept (each at most 4 MB decoded).
const logoCacheSize = 16

// Get returns the account's logo if the one kept is the file sha names.
func (c *LogoCache) Get(accountID, sha string) (image.Image, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.logos[accountID]
	if !ok || l.sha != sha {
		return nil, false
	}
	return l.img, true
}

// Put keeps the account's logo (the file sha names), replacing the one it had and
// dropping the oldest account's past the bound.
func (c *LogoCache) Put(accountID, sha string, img image.Image) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.logos == nil {
		c.logos = map[string]cachedLogo{}
	}
	if _, ok := c.logos[accountID]; !ok {
		c.order = append(c.order, accountID)
	}
	c.logos[accountID] = cachedLogo{sha: sha, img: img}
	if len(c.order) > logoCacheSize {
		delete(c.logos, c.order[0])
		c.order = c.order[1:]
	}
}
