// The `rhea` adapter (AD-AMQ-RHEA): rhea's client and server connections in one Node
// process over loopback TCP, speaking the `amqp` family of the adapter protocol
// (AD-AMQ-OPS) in JSON Lines on stdin/stdout. The client holds every link's sender, the
// server its receiver (AD-AMQ-ENDS). After every op the adapter waits until every byte
// written by one end has been read by the other and rhea has nothing scheduled
// (AD-AMQ-QUIESCE). Frames are recorded where rhea writes and dispatches them
// (AD-AMQ-FRAMES). `require('rhea')` resolves through NODE_PATH (AD-AMQ-VERSION).
'use strict';

const rhea = require('rhea');
const Connection = require('rhea/lib/connection.js');
const readline = require('readline');

const FAMILY = 'amqp';
const OPS = ['reset', 'begin', 'attach', 'flow', 'drain', 'transfer', 'drained', 'settle',
    'detach', 'end', 'state'];
// AD-AMQ-SETTINGS: rhea's defaults (credit_window 1000, session_buffer_size 2048);
// outgoing_buffer_size (0 = session_buffer_size) sizes the outgoing rings alone
const SETTINGS = {credit_window: 1000, session_buffer_size: 2048, outgoing_buffer_size: 0,
    message_size: 10};
// rhea before the session_buffer_size option (amqp/rhea#400) has a fixed ring of 2048
// slots: the sizes are then not offered, so a run cannot believe it chose them
const RING_CONFIGURABLE = require('fs')
    .readFileSync(require.resolve('rhea/lib/session.js'), 'utf8').includes('session_buffer_size');
if (!RING_CONFIGURABLE) {
    delete SETTINGS.session_buffer_size;
    delete SETTINGS.outgoing_buffer_size;
}

function buffers(settings) {
    if (!RING_CONFIGURABLE) return undefined;
    return {incoming: settings.session_buffer_size,
        outgoing: settings.outgoing_buffer_size || settings.session_buffer_size};
}
const FIELDS = {
    begin: ['remote_channel', 'next_outgoing_id', 'incoming_window', 'outgoing_window'],
    attach: ['name', 'handle', 'role', 'initial_delivery_count'],
    flow: ['next_incoming_id', 'incoming_window', 'next_outgoing_id', 'outgoing_window',
        'handle', 'delivery_count', 'link_credit', 'available', 'drain', 'echo'],
    transfer: ['handle', 'delivery_id', 'more', 'settled'],
    disposition: ['role', 'first', 'last', 'settled'],
    detach: ['handle', 'closed'],
    end: [],
};
const VERSION = require('rhea/package.json').version;

let frames = [];
let written = {client: 0, server: 0};
let read = {client: 0, server: 0};

function frameName(perf) {
    const d = perf && perf.constructor && perf.constructor.descriptor;
    if (!d) return undefined;
    const m = /amqp:([a-z]+):list/.exec(String(d.symbolic));
    return m ? m[1] : undefined;
}

function record(conn, dir, channel, perf) {
    const name = frameName(perf);
    if (!name) return;
    const rec = {side: (conn.socket && conn.socket._creditflow_side) || '?', dir: dir, frame: name, channel: channel};
    for (const f of FIELDS[name] || []) {
        let v = perf[f];
        if (v === undefined || v === null) continue;
        if (typeof v === 'object' && typeof v.valueOf === 'function') v = v.valueOf();
        if ((name === 'attach' || name === 'disposition') && f === 'role') v = v ? 'receiver' : 'sender';
        rec[f.replace(/_/g, '-')] = v;
    }
    frames.push(rec);
}

// AD-AMQ-FRAMES: sent frames where rhea writes them, received ones where it dispatches them
const writeFrame = Connection.prototype._write_frame;
Connection.prototype._write_frame = function (channel, frame, payload) {
    record(this, 'sent', channel, frame);
    return writeFrame.call(this, channel, frame, payload);
};
for (const name of ['open', 'begin', 'end', 'attach', 'detach', 'transfer', 'disposition', 'flow', 'close']) {
    const orig = Connection.prototype['on_' + name];
    Connection.prototype['on_' + name] = function (frame) {
        record(this, 'received', frame.channel, frame.performative);
        return orig.call(this, frame);
    };
}

class Refused extends Error {}

let pair = null;

function countBytes(sock, side) {
    sock._creditflow_side = side;
    sock.setNoDelay(true); // no Nagle delay: a small frame leaves at once on loopback
    const origWrite = sock.write.bind(sock);
    sock.write = function (buf, ...rest) {
        written[side] += buf.length;
        return origWrite(buf, ...rest);
    };
    sock.on('data', (buf) => { read[side] += buf.length; });
}

// AD-AMQ-QUIESCE: every byte written has been read by the peer, with nothing changing
// for 3 turns of the event loop in a row (rhea processes on process.nextTick, which runs
// before each setImmediate; loopback writes are readable at the next I/O poll), and no
// connection waiting to be processed.
async function quiesce() {
    let stable = 0;
    let last = '';
    const deadline = Date.now() + 5000;
    while (stable < 3) {
        await new Promise((r) => setImmediate(r));
        const balanced = written.client === read.server && written.server === read.client;
        const idle = !pair || (!pair.client.registered && !(pair.server && pair.server.registered));
        const sig = JSON.stringify([written, read]);
        stable = balanced && idle && sig === last ? stable + 1 : 0;
        last = sig;
        if (Date.now() > deadline) throw new Error('connection did not quiesce within 5 s');
    }
}

async function reset(settings) {
    if (pair) await teardown();
    frames = [];
    written = {client: 0, server: 0};
    read = {client: 0, server: 0};
    const container = rhea.create_container({id: 'creditflow'});
    const p = {settings: settings, container: container, sessions: {}, links: {}, received: {}};
    const serverOpts = {
        port: 0, host: '127.0.0.1',
        session_buffer_size: buffers(settings),
        credit_window: settings.credit_window,
        autoaccept: false,
    };
    await new Promise((resolve, reject) => {
        p.listener = container.listen(serverOpts);
        p.listener.on('listening', resolve);
        p.listener.on('connection', (sock) => countBytes(sock, 'server'));
        p.listener.on('error', reject);
    });
    const serverConn = new Promise((resolve) => {
        container.on('connection_open', (ctx) => {
            if (ctx.connection !== p.client) resolve(ctx.connection);
        });
    });
    container.on('receiver_open', (ctx) => {
        p.receiverOpened = (p.receiverOpened || 0) + 1;
    });
    container.on('message', (ctx) => {
        const name = ctx.receiver.name;
        (p.received[name] = p.received[name] || []).push(ctx.delivery);
    });
    container.on('settled', () => {});
    container.on('error', (e) => { process.stderr.write(`rhea error: ${e}\n`); });
    p.client = container.connect({
        port: p.listener.address().port, host: '127.0.0.1', reconnect: false,
        session_buffer_size: buffers(settings),
    });
    countBytes(p.client.socket, 'client');
    p.client.on('disconnected', () => {});
    await new Promise((resolve) => p.client.once('connection_open', resolve));
    p.server = await serverConn;
    pair = p;
    await quiesce();
}

async function teardown() {
    const p = pair;
    pair = null;
    try { p.client.close(); } catch (e) { /* already closed */ }
    await new Promise((r) => setTimeout(r, 5));
    try { p.client.socket.destroy(); } catch (e) { /* gone */ }
    try { p.server.socket.destroy(); } catch (e) { /* gone */ }
    p.listener.close();
}

function link(name) {
    const l = pair.links[name];
    if (!l || !l.receiver) throw new Refused(`no attached link ${JSON.stringify(name)}`);
    return l;
}

function serverSession(clientSession) {
    for (const ch in pair.server.remote_channel_map || {}) {
        const s = pair.server.remote_channel_map[ch];
        if (s && s.remote && s.remote.channel === clientSession.local.channel) return s;
    }
    return undefined;
}

function sessionState(s) {
    if (!s) return undefined;
    return {
        incoming_window: s.incoming.window,
        next_incoming_id: s.incoming.next_transfer_id,
        next_outgoing_id: s.outgoing.next_transfer_id,
        remote_incoming_window: s.outgoing.remote_window === undefined ? null : s.outgoing.transfer_window(),
        buffered_incoming: s.incoming.deliveries.size !== undefined ? s.incoming.deliveries.size : null,
        outgoing_available: s.outgoing.available(),
    };
}

function state() {
    const links = {};
    for (const name in pair.links) {
        const l = pair.links[name];
        const entry = {
            sender: {
                credit: l.sender.credit, delivery_count: l.sender.delivery_count,
                sendable: l.sender.sendable(),
                unsettled: countUnsettled(l.sender),
                queued: countQueued(l.sender),
                drain: Boolean(l.sender._draining),
            },
        };
        if (l.receiver) {
            entry.receiver = {
                credit: l.receiver.credit, delivery_count: l.receiver.delivery_count,
                unsettled: (pair.received[name] || []).length,
                drain: Boolean(l.receiver.drain),
            };
        }
        links[name] = entry;
    }
    const sessions = {};
    for (const name in pair.sessions) {
        const s = pair.sessions[name];
        sessions[name] = {client: sessionState(s)};
        const ss = serverSession(s);
        if (ss) sessions[name].server = sessionState(ss);
    }
    return {links: links, sessions: sessions};
}

// messages the application sent that rhea has not put on the wire yet
function countQueued(sender) {
    const out = sender.session.outgoing;
    let n = 0;
    for (let id = out.next_pending_delivery; id < out.next_delivery_id; id++) {
        const d = out.deliveries.by_id(id);
        if (d && d.link === sender) n++;
    }
    return n;
}

function countUnsettled(sender) {
    let n = 0;
    const buf = sender.session.outgoing.deliveries;
    for (let i = 0; i < buf.size; i++) {
        const d = buf.entries[(buf.head + i) % buf.capacity];
        if (d && d.link === sender && !d.remote_settled) n++;
    }
    return n;
}

async function op(req) {
    const o = req.op;
    if (o === 'begin') {
        if (pair.sessions[req.session]) throw new Refused(`session ${req.session} exists`);
        const s = pair.client.create_session(buffers(pair.settings));
        s.begin();
        pair.sessions[req.session] = s;
    } else if (o === 'attach') {
        const s = pair.sessions[req.session];
        if (!s) throw new Refused(`no session ${JSON.stringify(req.session)}`);
        if (pair.links[req.link]) throw new Refused(`link ${req.link} exists`);
        const snd = s.attach_sender({name: req.link, target: req.link, autosettle: true});
        pair.links[req.link] = {sender: snd, receiver: null};
        await quiesce();
        const ss = serverSession(s);
        pair.links[req.link].receiver = ss ? ss.links[req.link] : null;
    } else if (o === 'flow') {
        link(req.link).receiver.add_credit(Number(req.credit));
    } else if (o === 'drain') {
        const r = link(req.link).receiver;
        r.drain = true;
        if (Number(req.credit || 0) > 0) r.add_credit(Number(req.credit));
        else r.drain_credit();
    } else if (o === 'transfer') {
        const snd = link(req.link).sender;
        // rhea throws "circular buffer overflow" when the session's outgoing ring is full:
        // the application must wait (AD-AMQ-REFUSE)
        if (snd.session.outgoing.available() === 0) throw new Refused('the session outgoing buffer is full');
        snd.send({body: 'x'.repeat(pair.settings.message_size)});
    } else if (o === 'drained') {
        link(req.link).sender.set_drained(true);
    } else if (o === 'settle') {
        // the application settles `count` deliveries after its `keep` oldest ones
        const held = pair.received[req.link] || [];
        const n = req.count === undefined ? 1 : Number(req.count);
        const keep = req.keep === undefined ? 0 : Number(req.keep);
        if (n < 1 || keep < 0 || keep + n > held.length) {
            throw new Refused(`link ${req.link} holds ${held.length} unsettled deliveries: cannot keep ${keep} and settle ${n}`);
        }
        for (const d of held.splice(keep, n)) d.accept();
    } else if (o === 'detach') {
        link(req.link).sender.detach();
    } else if (o === 'end') {
        const s = pair.sessions[req.session];
        if (!s) throw new Refused(`no session ${JSON.stringify(req.session)}`);
        s.end();
    }
    await quiesce();
}

// AD-AMQ-POLICY: the model's policies (spec/amqp.md, AMQ-POL-*) rhea follows
function policy(settings) {
    const w = settings.credit_window;
    // rhea's FlowController tops the credit up to W on each arrival when
    // W - credit >= W/4, i.e. when credit <= W - ceil(W/4)
    const credit = w > 0
        ? {policy: 'window', window: w, threshold: w - Math.ceil(w / 4), count: 'credit',
            encoding: 'absolute', renew_on: 'arrival'}
        : {policy: 'manual', 'x-api': 'Receiver.add_credit(n) adds n'};
    return {
        credit: credit,
        sender_credit: {formula: 'serial'},
        window: {policy: 'ring', slots: RING_CONFIGURABLE ? settings.session_buffer_size : 2048,
            'x-renewal': 'a FLOW only when max-transfer-id - next-incoming-id < window/2'},
        // AMQ-POL-GRANT-DRAIN: the receiver's drain property, once set, is never
        // cleared: every later grant asks for a drain again (legal, section 2.7.4)
        grant_drain: 'sticky',
        'x-drain-echo': 'by hand: Sender.set_drained(true)',
    };
}

async function handle(req) {
    const o = req.op;
    if (o === 'hello') {
        return {ok: true, name: `rhea ${VERSION}`, version: VERSION, families: [FAMILY], ops: OPS,
            settings: SETTINGS, policy: policy(SETTINGS)};
    }
    if (!OPS.includes(o)) return {ok: false, error: `unknown op ${JSON.stringify(o)}`};
    if (o === 'reset') {
        const given = req.settings || {};
        const unknown = Object.keys(given).filter((k) => !(k in SETTINGS)).sort();
        if (unknown.length) return {ok: false, error: `unknown settings: ${unknown.join(', ')}`};
        const settings = Object.assign({}, SETTINGS);
        for (const k in given) settings[k] = Number(given[k]);
        await reset(settings);
        const out = {ok: true, policy: policy(settings), frames: frames, state: state()};
        frames = [];
        return out;
    }
    if (!pair) return {ok: false, error: `${o} before reset`};
    try {
        await op(req);
    } catch (e) {
        if (e instanceof Refused) return {ok: false, error: `${o}: ${e.message}`};
        throw e;
    }
    const out = {ok: true, frames: frames, state: state()};
    frames = [];
    return out;
}

async function main() {
    const rl = readline.createInterface({input: process.stdin, terminal: false});
    for await (const line of rl) {
        if (!line.trim()) continue;
        let req;
        try {
            req = JSON.parse(line);
        } catch (e) {
            process.stdout.write(JSON.stringify({ok: false, error: `not JSON: ${e.message}`}) + '\n');
            continue;
        }
        const resp = await handle(req);
        if ('id' in req) resp.id = req.id;
        process.stdout.write(JSON.stringify(resp) + '\n');
    }
    if (pair) await teardown();
    process.exit(0);
}

main().catch((e) => {
    process.stderr.write(`rhea adapter: ${e && e.stack ? e.stack.split('\n')[0] : e}\n`);
    process.exit(1);
});
