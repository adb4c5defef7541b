package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Avatars serves /v1/avatars: the built-in catalogue and the account's own avatars,
// created from a character sheet (multipart upload), read with short-lived preview URLs,
// and deleted while no published version uses them.
type Avatars struct {
	Service *avatars.Service
}

// Routes are the avatar routes, one Lambda function each.
func (h *Avatars) Routes() []Route {
	return []Route{
		{Function: "avatars-list", Method: http.MethodGet, Pattern: "/v1/avatars", Keys: TestKeys(), Handler: h.list},
		{Function: "avatars-create", Method: http.MethodPost, Pattern: "/v1/avatars", Keys: TestKeys(),
			MaxBody: avatars.MaxUploadBytes, Multipart: true, Handler: h.create},
		{Function: "avatars-get", Method: http.MethodGet, Pattern: "/v1/avatars/{id}", Keys: TestKeys(), Handler: h.get},
		{Function: "avatars-delete", Method: http.MethodDelete, Pattern: "/v1/avatars/{id}", Keys: TestKeys(), Handler: h.delete},
	}
}

// AvatarJSON is the avatar object: a built-in one (kind built_in, drawn by the renderer)
// or one of the account's own (kind custom, from its character sheet).
type AvatarJSON struct {
	ID          string `json:"id"`
	Object      string `json:"object"`
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// The account's own avatars only.
	CreatedAt *Time            `json:"created_at,omitempty"`
	Face      *avatars.Rect    `json:"face,omitempty"`
	Parts     []AvatarPartJSON `json:"parts,omitempty"`
	// PreviewsExpireAt: GET /v1/avatars/{id} only, when the parts' preview URLs stop working.
	PreviewsExpireAt *Time `json:"previews_expire_at,omitempty"`
}

// AvatarPartJSON is one image of a character sheet.
type AvatarPartJSON struct {
	Name   string        `json:"name"`
	Format string        `json:"format"`
	Width  int           `json:"width"`
	Height int           `json:"height"`
	Anchor avatars.Point `json:"anchor"`
	Bytes  int           `json:"bytes"`
	// PreviewURL downloads the image (no API key: the URL's signature is the credential)
	// until the avatar's previews_expire_at; GET /v1/avatars/{id} only.
	PreviewURL string `json:"preview_url,omitempty"`
}

// The avatar kinds.
const (
	AvatarBuiltIn = "built_in"
	AvatarCustom  = "custom"
)

// PresentAvatar maps a catalogue entry to its object. The description is made from the
// same fields the worker draws the avatar with.
func PresentAvatar(a persona.Avatar) AvatarJSON {
	return AvatarJSON{ID: a.ID, Object: "avatar", Kind: AvatarBuiltIn, Name: a.Name, Description: a.Description()}
}

// PresentOwnAvatar maps an account's avatar to its object; urls (by part) may be nil.
func PresentOwnAvatar(a avatars.Avatar, urls map[string]string) AvatarJSON {
	created := Time(a.CreatedAt)
	face := a.Face
	out := AvatarJSON{ID: a.ID, Object: "avatar", Kind: AvatarCustom, Name: a.Name, CreatedAt: &created, Face: &face,
		Description: fmt.Sprintf("Your own character sheet: %d mouth shapes, eyes closed, %d idle frames.",
			len(avatars.MouthParts), len(a.Parts)-len(avatars.RequiredParts))}
	for _, p := range a.Parts {
		out.Parts = append(out.Parts, AvatarPartJSON{Name: p.Name, Format: p.Format, Width: p.Width, Height: p.Height,
			Anchor: p.Anchor, Bytes: p.Bytes, PreviewURL: urls[p.Name]})
	}
	return out
}

// list: the built-in catalogue first, in its order, then the account's own, newest
// first (at most avatars.MaxPerAccount: one page).
func (h *Avatars) list(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	out := ListJSON[AvatarJSON]{Object: "list", Data: make([]AvatarJSON, 0, len(persona.Avatars))}
	for _, av := range persona.Avatars {
		out.Data = append(out.Data, PresentAvatar(av))
	}
	own, err := h.Service.List(r.Context(), AccountFrom(r.Context()).ID)
	if err != nil {
		return 0, nil, err
	}
	for _, a := range own {
		out.Data = append(out.Data, PresentOwnAvatar(a, nil))
	}
	return http.StatusOK, out, nil
}

func (h *Avatars) get(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	id := r.PathValue("id")
	if a, ok := persona.AvatarByID(id); ok {
		return http.StatusOK, PresentAvatar(a), nil
	}
	a, err := h.Service.Get(r.Context(), AccountFrom(r.Context()).ID, id)
	if err != nil {
		return 0, nil, err
	}
	urls, exp, err := h.Service.PreviewURLs(r.Context(), a)
	if err != nil {
		return 0, nil, err
	}
	out := PresentOwnAvatar(a, urls)
	t := Time(exp)
	out.PreviewsExpireAt = &t
	// The URLs are credentials for a quarter of an hour: no cache keeps them.
	w.Header().Set("Cache-Control", "no-store")
	return http.StatusOK, out, nil
}

func (h *Avatars) delete(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	if err := DecodeEmpty(r); err != nil {
		return 0, nil, err
	}
	id := r.PathValue("id")
	if _, ok := persona.AvatarByID(id); ok {
		return 0, nil, apierr.Invalid("id", fmt.Sprintf("%s is a built-in avatar: only an account's own avatars can be deleted", id))
	}
	if err := h.Service.Delete(r.Context(), AccountFrom(r.Context()).ID, id); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// maxSheetParts bounds the multipart parts read: the sheet field, the five required
// images, the idle frames, and a few a client may add (refused by name).
const maxSheetParts = 16

func (h *Avatars) create(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return 0, nil, apierr.New(apierr.CodeUnsupportedMediaType,
			"POST /v1/avatars takes a character sheet as multipart/form-data: a sheet JSON field and one file field per part")
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	var manifest []byte
	files := map[string][]byte{}
	for n := 0; ; n++ {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, nil, apierr.New(apierr.CodeInvalidJSON, "the multipart body is malformed: "+err.Error())
		}
		if n >= maxSheetParts {
			return 0, nil, apierr.Invalid("body", fmt.Sprintf("a character sheet has at most %d fields", maxSheetParts))
		}
		name := p.FormName()
		if name == "" {
			return 0, nil, apierr.Invalid("body", "every multipart field needs a name (Content-Disposition: form-data; name=...)")
		}
		// One byte past the limit tells Validate the part is too large.
		b, err := io.ReadAll(io.LimitReader(p, avatars.MaxFileBytes+1))
		if err != nil {
			return 0, nil, apierr.New(apierr.CodeInvalidJSON, "the multipart body is malformed: "+err.Error())
		}
		_, seenFile := files[name]
		if seenFile || (name == avatars.SheetField && manifest != nil) {
			return 0, nil, apierr.Invalid(name, name+" was sent twice: send each part once")
		}
		if name == avatars.SheetField {
			manifest = bytes.Clone(b)
			if manifest == nil {
				manifest = []byte{}
			}
			continue
		}
		files[name] = b
	}
	sheet, err := avatars.Validate(manifest, files)
	if err != nil {
		return 0, nil, err
	}
	a, err := h.Service.Create(r.Context(), AccountFrom(r.Context()).ID, sheet)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, PresentOwnAvatar(a, nil), nil
}
