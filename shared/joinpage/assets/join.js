// Bridgeline's hosted join page: a web call's caller meets the assistant here. The
// participant token comes in the address's fragment (#token=...), which the browser never
// puts in an address it requests; the page reads its unverified claims itself (room,
// expiry), then posts the token to its own server (/join/info, in the body), which
// verifies it and answers the account's branding (name, colour, logo, support link), the
// assistant's name and whether the call is still there: the page shows them before Start,
// and an ended call says so at once. It asks for the microphone (and the camera on a
// video call) when the visitor presses Start, joins LiveKit at the rtc_url its server wrote into the page, shows the
// assistant's video, plays its voice, shows live captions of both sides (LiveKit's
// lk.transcription text streams) and hangs up. window.joinPage holds the state for
// whoever wants to look (tests do).
'use strict';

(() => {
  const LK = window.LivekitClient;
  const $ = (id) => document.getElementById(id);
  const TOPIC = 'lk.transcription';
  const A_SEGMENT = 'lk.segment_id';
  const A_FINAL = 'lk.transcription_final';
  const state = {
    state: 'loading', claims: null, room: null, video: false, captions: [], level: 0, peak: 0,
    remoteLevel: 0, remotePeak: 0, error: null, disconnectReason: null, assistant: null,
    info: null, company: null, greeted: false,
  };
  window.joinPage = state;

  function setState(name, text) {
    state.state = name;
    document.body.dataset.state = name;
    if (text !== undefined) $('status').textContent = text;
  }

  function fail(text, err) {
    state.error = text;
    if (err) console.error(text, err);
    setState('failed', text);
    for (const id of ['start', 'hangup', 'mute', 'mic-hint', 'meter']) $(id).hidden = true;
    $('placeholder').hidden = false;
    $('placeholder-text').textContent = text;
  }

  // token reads the token from the fragment, then takes it out of the address bar (kept
  // in this tab's storage, so a reload still finds it), so a copied address or a shared
  // screen does not carry it.
  function token() {
    const key = 'bridgeline-join-token';
    const frag = new URLSearchParams(location.hash.slice(1));
    let t = frag.get('token');
    if (t) {
      try { sessionStorage.setItem(key, t); } catch (e) { /* private mode: keep it in the page only */ }
      history.replaceState(null, '', location.pathname + location.search);
    } else {
      try { t = sessionStorage.getItem(key); } catch (e) { t = null; }
    }
    return t;
  }

  // claims decodes a JWT's payload; it does not (cannot) verify it: LiveKit does.
  function claims(jwt) {
    const parts = jwt.split('.');
    if (parts.length !== 3) return null;
    try {
      const b64 = parts[1].replace(/-/g, '+').replace(/_/g, '/');
      const json = decodeURIComponent(Array.from(atob(b64), (c) => '%' + c.charCodeAt(0).toString(16).padStart(2, '0')).join(''));
      return JSON.parse(json);
    } catch (e) {
      return null;
    }
  }

  // title names the company and the assistant in the tab.
  function title() {
    const parts = [state.company, state.assistant].filter(Boolean);
    document.title = parts.length ? parts.join(' — ') : 'Call';
  }

  // initialIcon draws the company's initial on its colour: the tab's icon when the
  // account has no logo.
  function initialIcon(name, color) {
    const c = document.createElement('canvas');
    c.width = c.height = 64;
    const g = c.getContext('2d');
    g.fillStyle = color;
    g.beginPath();
    g.arc(32, 32, 32, 0, 2 * Math.PI);
    g.fill();
    g.fillStyle = '#fff';
    g.font = 'bold 38px system-ui, sans-serif';
    g.textAlign = 'center';
    g.textBaseline = 'middle';
    g.fillText(Array.from(name)[0].toUpperCase(), 32, 35);
    return c.toDataURL('image/png');
  }

  // brand shows the account's branding as the server answered it for a token it
  // verified (/join/info): a token the page decoded itself is never trusted for it, so
  // a crafted link cannot dress the page as another business.
  function brand(b) {
    const color = /^#[0-9a-fA-F]{6}$/.test(b.color || '') ? b.color : null;
    if (color) document.documentElement.style.setProperty('--brand', color);
    if (b.name) {
      state.company = b.name;
      $('brand').textContent = b.name;
    }
    const icon = $('favicon');
    if (b.logo && b.logo.startsWith('data:image/')) {
      $('logo').src = b.logo;
      $('logo').alt = b.name || '';
      $('logo').hidden = false;
      $('initial').hidden = true;
      icon.href = b.logo;
    } else if (b.name) {
      $('initial').textContent = Array.from(b.name)[0].toUpperCase();
      $('initial').classList.add('initial');
      try { icon.href = initialIcon(b.name, color || '#3b5bdb'); } catch (e) { /* no canvas: keep the blank icon */ }
    }
    if (b.support_url && /^https:\/\//.test(b.support_url)) {
      $('support').href = b.support_url;
      $('support-line').hidden = false;
    }
    title();
  }

  function assistantNamed(name) {
    if (!name) return;
    state.assistant = name;
    $('who').textContent = `with ${name}`;
    title();
  }

  // info asks the page's server about the link: null when it could not answer (the
  // page then works as it did without: no branding before Start).
  async function info(jwt) {
    let res;
    try {
      res = await fetch('/join/info', {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token: jwt }),
        cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer',
      });
    } catch (e) {
      console.warn('join info unavailable', e);
      return null;
    }
    let body = null;
    try { body = await res.json(); } catch (e) { body = null; }
    if (res.ok) return body;
    const code = body && body.error && body.error.code;
    if (res.status === 400 || res.status === 409) return { refused: code || 'invalid' };
    console.warn('join info answered', res.status, body);
    return null;
  }

  // brandFromToken is brand() from the attributes LiveKit gives the joined participant,
  // when the server could not be asked before Start: LiveKit verified the token then.
  function brandFromToken(participant) {
    const attrs = (participant && participant.attributes) || {};
    brand({ name: attrs['bridgeline.brand_name'], color: attrs['bridgeline.brand_color'] });
    assistantNamed(attrs['bridgeline.assistant_name']);
  }

  function clock(sec) {
    return new Date(sec * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  }

  // A LiveKit server on this machine hands out loopback candidates and needs no STUN.
  function rtcConfigFor(url) {
    const host = new URL(url).hostname;
    return ['127.0.0.1', 'localhost', '[::1]'].includes(host) ? { iceServers: [] } : undefined;
  }

  // meter follows an audio track's level while the call lasts and still() holds
  // (level-meter.js).
  function meter(mediaStreamTrack, onLevel, still = () => true) {
    window.bridgelineLevelMeter(state.audio, mediaStreamTrack, onLevel, () => !!state.room && still());
  }

  // Captions: one line per segment (a turn of one side), replaced by each newer stream
  // of the same segment until the final one, as LiveKit's front ends do.
  function caption(info, identity, text) {
    const attrs = info.attributes || {};
    const segment = attrs[A_SEGMENT] || info.id;
    const final = attrs[A_FINAL] === 'true';
    const me = state.room && identity === state.room.localParticipant.identity;
    let c = state.captions.find((x) => x.segment === segment);
    if (!c) {
      c = { segment, identity, speaker: me ? 'you' : 'assistant', text: '', final: false, el: document.createElement('li') };
      c.el.className = c.speaker;
      state.captions.push(c);
      $('captions').appendChild(c.el);
      while ($('captions').children.length > 6) $('captions').firstElementChild.remove();
    }
    if (c.final && !final) return; // a late interim never replaces the final words
    c.text = text;
    c.final = final;
    c.el.textContent = `${me ? 'You' : (state.assistant || 'Assistant')}: ${text}`;
    c.el.classList.toggle('interim', !final);
    // "Say hello when the assistant has greeted you" is true only until it has.
    if (!me && state.state === 'connected' && !state.greeted) {
      state.greeted = true;
      $('status').textContent = `On the call with ${state.assistant || 'the assistant'}.`;
    }
  }

  function onTrack(track, pub, participant) {
    if (track.kind === 'video') {
      track.attach($('remote-video'));
      $('placeholder').hidden = true;
    } else if (track.kind === 'audio') {
      $('audio-sink').appendChild(track.attach());
      meter(track.mediaStreamTrack, (l) => {
        state.remoteLevel = l;
        state.remotePeak = Math.max(state.remotePeak, l);
      });
    }
    if (participant && participant.name) assistantNamed(participant.name);
  }

  // localMedia asks for the microphone, and the camera on a video call: a visitor who
  // refuses the camera still talks with the microphone alone.
  async function localMedia() {
    if (state.video) {
      try {
        return await LK.createLocalTracks({ audio: true, video: { resolution: LK.VideoPresets.h360.resolution } });
      } catch (e) {
        console.warn('camera and microphone refused together; trying the microphone alone', e);
      }
    }
    return LK.createLocalTracks({ audio: true, video: false });
  }

  function mediaError(e) {
    const name = (e && e.name) || '';
    if (name === 'NotAllowedError' || name === 'SecurityError') {
      return 'Your browser blocked the microphone. Allow it for this page (the icon in the address bar) and press Start again.';
    }
    if (name === 'NotFoundError' || name === 'OverconstrainedError') return 'No microphone was found. Connect one and press Start again.';
    if (name === 'NotReadableError') return 'The microphone is in use by another application. Close it and press Start again.';
    return `The microphone could not be opened: ${(e && e.message) || e}`;
  }

  function connectError(e, c) {
    if (c.exp && Date.now() / 1000 >= c.exp) return `This call link expired at ${clock(c.exp)}. Ask for a new one.`;
    const msg = String((e && e.message) || e);
    const status = e && e.status;
    if (status === 404 || /does not exist|not found/i.test(msg)) return 'This call has ended.';
    if (status === 401 || status === 403) return 'This call link is not valid any more. Ask for a new one.';
    return `Could not connect to the call: ${msg}`;
  }

  function ended(reason) {
    const R = LK.DisconnectReason || {};
    switch (reason) {
      case R.ROOM_DELETED:
      case R.ROOM_CLOSED:
        return 'The call has ended.';
      case R.CLIENT_INITIATED:
        return 'You hung up. The call has ended.';
      case R.DUPLICATE_IDENTITY:
        return 'The call continues in another window.';
      case R.PARTICIPANT_REMOVED:
        return 'You were removed from the call.';
      default:
        return 'The call has ended.';
    }
  }

  function finish(reason) {
    if (state.state === 'ended' || state.state === 'failed') return;
    state.disconnectReason = LK.DisconnectReason ? LK.DisconnectReason[reason] || String(reason) : String(reason);
    const room = state.room;
    state.room = null;
    if (room) room.disconnect();
    $('remote-video').srcObject = null;
    $('self-view').srcObject = null;
    delete $('self-view').dataset.live;
    $('audio-sink').replaceChildren();
    for (const id of ['hangup', 'mute', 'meter']) $(id).hidden = true;
    $('placeholder').hidden = false;
    const text = ended(reason);
    $('placeholder-text').textContent = text;
    setState('ended', text);
  }

  async function start(jwt, c, rtcURL) {
    $('start').hidden = true;
    $('mic-hint').hidden = true;
    // Made inside the click, so the browser lets it play.
    state.audio = state.audio || new (window.AudioContext || window.webkitAudioContext)();
    $('placeholder-text').textContent = 'Connecting…';
    setState('starting', 'Waiting for the microphone…');
    let tracks;
    try {
      tracks = await localMedia();
    } catch (e) {
      fail(mediaError(e), e);
      $('start').hidden = false; // press Start again once allowed
      return;
    }
    if (c.exp && Date.now() / 1000 >= c.exp) {
      tracks.forEach((t) => t.stop());
      fail(`This call link expired at ${clock(c.exp)}. Ask for a new one.`);
      return;
    }
    setState('connecting', 'Connecting…');
    const room = new LK.Room({ adaptiveStream: true, dynacast: true });
    state.room = room;
    room
      .on(LK.RoomEvent.TrackSubscribed, onTrack)
      .on(LK.RoomEvent.TrackUnsubscribed, (track) => track.detach())
      .on(LK.RoomEvent.ParticipantConnected, (p) => assistantNamed(p.name))
      .on(LK.RoomEvent.Disconnected, finish);
    room.registerTextStreamHandler(TOPIC, async (reader, participant) => {
      try {
        caption(reader.info, participant.identity, await reader.readAll());
      } catch (e) {
        console.warn('caption stream failed', e);
      }
    });
    try {
      await room.connect(rtcURL, jwt, { rtcConfig: rtcConfigFor(rtcURL) });
    } catch (e) {
      tracks.forEach((t) => t.stop());
      state.room = null;
      fail(connectError(e, c), e);
      return;
    }
    if (!state.info) brandFromToken(room.localParticipant); // LiveKit accepted the token: its branding is the account's
    await room.startAudio().catch(() => {});
    for (const p of room.remoteParticipants.values()) assistantNamed(p.name);
    for (const t of tracks) {
      await room.localParticipant.publishTrack(t);
      if (t.kind === 'video') {
        t.attach($('self-view'));
        $('self-view').dataset.live = '1';
      } else {
        const onLevel = (l) => {
          state.level = l;
          state.peak = Math.max(state.peak, l);
          $('level').style.width = `${Math.min(100, Math.round(l * 400))}%`;
        };
        // The microphone may be captured anew during the call (restartTrack: another
        // device chosen, the capture reopened): the meter follows the new capture.
        const follow = () => {
          const capture = t.mediaStreamTrack;
          meter(capture, onLevel, () => t.mediaStreamTrack === capture);
        };
        follow();
        t.on(LK.TrackEvent.Restarted, follow);
      }
    }
    $('hangup').hidden = false;
    $('mute').hidden = false;
    $('meter').hidden = false;
    $('placeholder-text').textContent = state.video ? `${state.assistant || 'The assistant'} is joining…` : 'On the call.';
    setState('connected', state.greeted ? `On the call with ${state.assistant || 'the assistant'}.`
      : `Connected. ${state.assistant || 'The assistant'} will greet you in a moment.`);
  }

  async function main() {
    const rtcURL = document.querySelector('meta[name="bridgeline-rtc-url"]').content;
    if (!LK) {
      fail('This page could not load its call software. Reload it, or try another browser.');
      return;
    }
    if (!LK.isBrowserSupported()) {
      fail('This browser cannot make calls. Open the link in a recent Chrome, Firefox, Safari or Edge.');
      return;
    }
    const jwt = token();
    if (!jwt) {
      fail('This link is incomplete: it carries no call. Open the whole link you were given.');
      return;
    }
    const c = claims(jwt);
    if (!c || !c.video || !c.video.room) {
      fail('This is not a valid call link.');
      return;
    }
    state.claims = { room: c.video.room, identity: c.sub, exp: c.exp };
    if (c.exp && Date.now() / 1000 >= c.exp) {
      fail(`This call link expired at ${clock(c.exp)}. Ask for a new one.`);
      return;
    }
    const sources = c.video.canPublishSources || [];
    state.video = sources.includes('camera');
    $('cam-hint').hidden = !state.video;
    if (!state.video) document.body.classList.add('audio-only');
    setState('loading', 'Checking your link…');
    const got = await info(jwt);
    if (got && got.refused) {
      fail(got.refused === 'session_ended' ? `This call link expired at ${clock(c.exp)}. Ask for a new one.` : 'This is not a valid call link.');
      return;
    }
    if (got) {
      state.info = got;
      brand(got.brand || {});
      assistantNamed(got.assistant);
      if (got.state === 'ended') {
        for (const id of ['start', 'mic-hint']) $(id).hidden = true;
        $('placeholder').hidden = false;
        $('placeholder-text').textContent = 'This call has ended.';
        setState('ended', 'This call has ended. Ask for a new link to call again.');
        return;
      }
    }
    const who = state.assistant || 'The assistant';
    $('placeholder-text').textContent = got && got.state === 'live' ? 'This call is already under way, maybe in another window.'
      : `${who} is ready when you are.`;
    $('mic-hint').hidden = false;
    $('start').hidden = false;
    setState('ready', `Press Start to talk with ${state.assistant || 'the assistant'}.`);
    $('start').addEventListener('click', () => start(jwt, c, rtcURL));
    $('hangup').addEventListener('click', () => finish(LK.DisconnectReason.CLIENT_INITIATED));
    $('mute').addEventListener('click', async () => {
      const lp = state.room && state.room.localParticipant;
      if (!lp) return;
      const muted = lp.isMicrophoneEnabled;
      await lp.setMicrophoneEnabled(!muted);
      $('mute').textContent = muted ? 'Unmute' : 'Mute';
      $('mute').setAttribute('aria-pressed', String(muted));
    });
    // Closing the tab leaves the call, which hangs up.
    window.addEventListener('pagehide', () => {
      if (state.room) state.room.disconnect();
    });
  }

  main();
})();
