// Bridgeline's hosted join page: a web call's caller meets the assistant here. The
// participant token comes in the address's fragment (#token=...), which the browser never
// sends to a server; the page reads its unverified claims itself (room, expiry) and shows
// the account's branding only once LiveKit verified the token (the attributes LiveKit
// gives the joined participant), asks for the microphone (and the camera on a video call) when the visitor
// presses Start, joins LiveKit at the rtc_url its server wrote into the page, shows the
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

  // brand shows the account's name and colour from the attributes of the participant
  // LiveKit let in: the token's signature was checked then. Claims the page decoded
  // itself are never shown: anyone can forge an unsigned token with any name, so a
  // crafted link could otherwise dress the page as another business.
  function brand(participant) {
    const attrs = (participant && participant.attributes) || {};
    const name = attrs['bridgeline.brand_name'];
    const color = attrs['bridgeline.brand_color'];
    if (name) {
      $('brand').textContent = name;
      document.title = `Call · ${name}`;
    }
    if (/^#[0-9a-fA-F]{6}$/.test(color || '')) document.documentElement.style.setProperty('--brand', color);
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
    if (participant && participant.name) {
      state.assistant = participant.name;
      $('who').textContent = `with ${participant.name}`;
    }
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
      .on(LK.RoomEvent.ParticipantConnected, (p) => {
        if (p.name) $('who').textContent = `with ${p.name}`;
      })
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
    brand(room.localParticipant); // LiveKit accepted the token: its branding is the account's
    await room.startAudio().catch(() => {});
    for (const p of room.remoteParticipants.values()) if (p.name) $('who').textContent = `with ${p.name}`;
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
    $('placeholder-text').textContent = state.video ? 'The assistant is joining…' : 'On the call.';
    setState('connected', 'Connected. Say hello when the assistant has greeted you.');
  }

  function main() {
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
    $('placeholder-text').textContent = 'Ready when you are.';
    $('mic-hint').hidden = false;
    $('start').hidden = false;
    setState('ready', 'Press Start to begin the call.');
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
