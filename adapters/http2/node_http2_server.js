// AD-H2-NODE: Node's built-in http2 module (nghttp2 inside) as an HTTP/2 server on
// 127.0.0.1 with an OS-chosen port, plain TCP (h2c with prior knowledge). The port is the
// first line on stdout; then one JSON command per stdin line, one JSON answer per stdout
// line, from the Python adapter (creditflow.adapters.http2.node_http2), whose own peer
// is the client. The server's application: it answers each request stream with
// `:status 200` on its first `send`, writes what `send` asks, and reads request DATA only
// as far as `consume` allows (the stream is paused otherwise), so that Node's own credit
// policy decides what WINDOW_UPDATE goes out. Exits when stdin closes.
'use strict';
const http2 = require('http2');
const readline = require('readline');

const streams = new Map(); // stream id -> {stream, quota, read, responded}
let session = null;

const server = http2.createServer();
server.on('session', (s) => {
  session = s;
  s.on('error', () => {});
});
server.on('stream', (stream) => {
  const entry = { stream, quota: 0, read: 0, responded: false };
  streams.set(stream.id, entry);
  stream.on('error', () => {});
  stream.pause();
  stream.on('data', (chunk) => {
    entry.read += chunk.length;
    if (entry.read >= entry.quota) stream.pause();
  });
});

function answer(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

function streamState(entry) {
  const st = entry.stream.state || {};
  return {
    localWindowSize: st.localWindowSize,
    state: st.state,
    localClose: st.localClose,
    remoteClose: st.remoteClose,
    read: entry.read,
    bufferSize: entry.stream.bufferSize,
  };
}

function state() {
  const out = { streams: {} };
  if (session && !session.destroyed) out.session = session.state;
  for (const [id, entry] of streams) out.streams[id] = streamState(entry);
  return out;
}

function handle(cmd) {
  const entry = streams.get(cmd.stream);
  if (cmd.cmd === 'state') return { ok: true, state: state() };
  if (cmd.cmd === 'settings') return { ok: true, settings: http2.getDefaultSettings() };
  if (!entry) return { ok: false, error: `${cmd.cmd}: no stream ${cmd.stream}` };
  const stream = entry.stream;
  if (cmd.cmd === 'send') {
    if (stream.destroyed || stream.closed) return { ok: false, error: `send: stream ${cmd.stream} is closed` };
    if (!entry.responded) {
      stream.respond({ ':status': 200 });
      entry.responded = true;
    }
    if (cmd.octets > 0) stream.write(Buffer.alloc(cmd.octets));
    if (cmd.end_stream) stream.end();
    return { ok: true };
  }
  if (cmd.cmd === 'consume') {
    entry.quota += cmd.octets;
    if (entry.read < entry.quota) stream.resume();
    return { ok: true };
  }
  if (cmd.cmd === 'cancel') {
    stream.close(http2.constants.NGHTTP2_CANCEL);
    return { ok: true };
  }
  return { ok: false, error: `unknown command ${cmd.cmd}` };
}

server.listen(0, '127.0.0.1', () => {
  answer({ port: server.address().port, version: process.versions.node, nghttp2: process.versions.nghttp2 });
  const rl = readline.createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    let cmd;
    try {
      cmd = JSON.parse(line);
    } catch (e) {
      answer({ ok: false, error: 'not JSON' });
      return;
    }
    try {
      answer(handle(cmd));
    } catch (e) {
      answer({ ok: false, error: `${cmd.cmd}: ${e.message}` });
    }
  });
  rl.on('close', () => process.exit(0));
});
