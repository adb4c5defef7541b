package httpapi

import (
	"net/http"

	"github.com/bridgeline/bridgeline/shared/siptrunk"
)

// SIPTrunks serves /v1/sip_trunks and the SIP line routes POST /v1/lines and DELETE
// /v1/lines/{id} (a line the customer adds is a number on one of its trunks).
type SIPTrunks struct {
	Service *siptrunk.Service
}

// Routes are the trunk and SIP line routes, one Lambda function each. Every one takes
// live keys only, reads included: a trunk is only ever on the real phone network, and
// its addresses and usernames are half of the provider's credential.
func (h *SIPTrunks) Routes() []Route {
	return withKeys(LiveOnly(sipNetwork), []Route{
		{Function: "sip-trunks-list", Method: http.MethodGet, Pattern: "/v1/sip_trunks", Handler: h.list},
		{Function: "sip-trunks-create", Method: http.MethodPost, Pattern: "/v1/sip_trunks", ReplayOmits: []string{"inbound.password"}, Handler: h.create},
		{Function: "sip-trunks-get", Method: http.MethodGet, Pattern: "/v1/sip_trunks/{id}", Handler: h.get},
		{Function: "sip-trunks-update", Method: http.MethodPatch, Pattern: "/v1/sip_trunks/{id}", Handler: h.update},
		{Function: "sip-trunks-delete", Method: http.MethodDelete, Pattern: "/v1/sip_trunks/{id}", Handler: h.delete},
		{Function: "lines-create", Method: http.MethodPost, Pattern: "/v1/lines", Handler: h.createLine},
		{Function: "lines-delete", Method: http.MethodDelete, Pattern: "/v1/lines/{id}", Handler: h.deleteLine},
	})
}

// TrunkJSON is the sip_trunk object. Passwords are never shown: password_set says one is
// stored.
type TrunkJSON struct {
	ID       string             `json:"id"`
	Object   string             `json:"object"`
	Name     string             `json:"name"`
	Inbound  *TrunkInboundJSON  `json:"inbound"`
	Outbound *TrunkOutboundJSON `json:"outbound"`
	// MediaEncryption is SRTP on the trunk's calls: disable, allow or require.
	MediaEncryption string `json:"media_encryption"`
	// Numbers are the trunk's SIP lines' numbers.
	Numbers []string `json:"numbers"`
	// OriginationURI is where the provider sends the trunk's calls (sip:host:port).
	OriginationURI string `json:"origination_uri"`
	// VideoOriginationURI is where calls that carry video go (the SIP video bridge), null
	// where none runs: SIP is then audio only.
	VideoOriginationURI *string `json:"video_origination_uri"`
	CreatedAt           Time    `json:"created_at"`
	UpdatedAt           Time    `json:"updated_at"`
}

// TrunkInboundJSON is a trunk's inbound side.
type TrunkInboundJSON struct {
	AllowedAddresses []string `json:"allowed_addresses"`
	Username         *string  `json:"username"`
	PasswordSet      bool     `json:"password_set"`
	// Password is the inbound password Bridgeline generated, shown in the answer of the
	// write that generated it and never again.
	Password *string `json:"password,omitempty"`
}

// TrunkOutboundJSON is a trunk's outbound side.
type TrunkOutboundJSON struct {
	Address     string  `json:"address"`
	Transport   string  `json:"transport"`
	Username    *string `json:"username"`
	PasswordSet bool    `json:"password_set"`
}

// PresentTrunk maps a trunk to its JSON object, without its passwords.
func (h *SIPTrunks) PresentTrunk(t siptrunk.Trunk) TrunkJSON {
	out := TrunkJSON{ID: t.ID, Object: "sip_trunk", Name: t.Name, MediaEncryption: t.Encryption(), Numbers: t.Numbers,
		OriginationURI: h.Service.Origination.URI(), VideoOriginationURI: StringOrNull(h.Service.VideoOrigination.URI()), CreatedAt: Time(t.CreatedAt), UpdatedAt: Time(t.UpdatedAt)}
	if out.Numbers == nil {
		out.Numbers = []string{}
	}
	if in := t.Inbound; in != nil {
		addrs := in.AllowedAddresses
		if addrs == nil {
			addrs = []string{}
		}
		out.Inbound = &TrunkInboundJSON{AllowedAddresses: addrs, Username: StringOrNull(in.Username), PasswordSet: in.Password != ""}
		if in.NewPassword != "" {
			out.Inbound.Password = &in.NewPassword
		}
	}
	if o := t.Outbound; o != nil {
		out.Outbound = &TrunkOutboundJSON{Address: o.Address, Transport: o.Transport, Username: StringOrNull(o.Username),
			PasswordSet: o.Password != ""}
	}
	return out
}

// trunkBody is the create and update request; null removes a side on update.
type trunkBody struct {
	Name     Nullable[string]       `json:"name"`
	Inbound  Nullable[inboundBody]  `json:"inbound"`
	Outbound Nullable[outboundBody] `json:"outbound"`
	// MediaEncryption: disable, allow or require; left out of a create, the default
	// (siptrunk.DefaultEncryption).
	MediaEncryption Nullable[string] `json:"media_encryption"`
}

type inboundBody struct {
	AllowedAddresses []string `json:"allowed_addresses"`
	Username         string   `json:"username"`
	Password         *string  `json:"password"`
}

type outboundBody struct {
	Address   string  `json:"address"`
	Transport string  `json:"transport"`
	Username  string  `json:"username"`
	Password  *string `json:"password"`
}

func (b trunkBody) input() (siptrunk.Input, error) {
	if err := b.Name.NotNull("name"); err != nil {
		return siptrunk.Input{}, err
	}
	if err := b.MediaEncryption.NotNull("media_encryption"); err != nil {
		return siptrunk.Input{}, err
	}
	in := siptrunk.Input{Name: b.Name.Ptr(), MediaEncryption: b.MediaEncryption.Ptr(), ClearInbound: b.Inbound.Null, ClearOutbound: b.Outbound.Null}
	if v := b.Inbound.Ptr(); v != nil {
		in.Inbound = &siptrunk.InboundInput{AllowedAddresses: v.AllowedAddresses, Username: v.Username, Password: v.Password}
	}
	if v := b.Outbound.Ptr(); v != nil {
		in.Outbound = &siptrunk.OutboundInput{Address: v.Address, Transport: v.Transport, Username: v.Username, Password: v.Password}
	}
	return in, nil
}

func (h *SIPTrunks) create(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body trunkBody
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	in, err := body.input()
	if err != nil {
		return 0, nil, err
	}
	t, err := h.Service.Create(r.Context(), AccountFrom(r.Context()).ID, in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, h.PresentTrunk(t), nil
}

func (h *SIPTrunks) list(w http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := ListQuery(r, siptrunk.IDPrefix)
	if err != nil {
		return 0, nil, err
	}
	list, err := h.Service.List(r.Context(), AccountFrom(r.Context()).ID, q)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, NewList(list, q, h.PresentTrunk), nil
}

func (h *SIPTrunks) get(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	t, err := h.Service.Get(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, h.PresentTrunk(t), nil
}

func (h *SIPTrunks) update(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body trunkBody
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	in, err := body.input()
	if err != nil {
		return 0, nil, err
	}
	t, err := h.Service.Update(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, h.PresentTrunk(t), nil
}

func (h *SIPTrunks) delete(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	t, err := h.Service.Delete(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, deletedJSON{ID: t.ID, Object: "sip_trunk", Deleted: true}, nil
}

// createLineBody is POST /v1/lines: a SIP line's number and trunk, and its settings.
type createLineBody struct {
	lineFields
	Platform   string `json:"platform"`
	Handle     string `json:"handle"`
	SIPTrunkID string `json:"sip_trunk_id"`
}

func (h *SIPTrunks) createLine(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body createLineBody
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	u, err := body.update()
	if err != nil {
		return 0, nil, err
	}
	l, err := h.Service.CreateLine(r.Context(), AccountFrom(r.Context()).ID, siptrunk.LineInput{
		Platform: body.Platform, Handle: body.Handle, TrunkID: body.SIPTrunkID, Settings: u})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, PresentLine(l), nil
}

func (h *SIPTrunks) deleteLine(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	l, err := h.Service.DeleteLine(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, deletedJSON{ID: l.ID, Object: "line", Deleted: true}, nil
}
