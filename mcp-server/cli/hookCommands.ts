/**
 * `baton hooks`: list the outgoing webhooks with their recent deliveries and failures,
 * add one (`hooks add URL --secret-file F`), remove one, and `hooks test URL --secret-file F`, a signed
 * ping sent from this process. Add pings the receiver first (unless --no-test) so an unreachable or
 * refusing URL is an error and nothing is added. Never prints a secret: the hub returns only its
 * fingerprint. `hooks resume ID` lets a hook paused by a restore deliver again. Delivery itself is the
 * hub's (mcp-server/hub/webhooks.ts).
 */
import packageJson from '../../package.json';
import { maxSecretBytes, readBoundedText } from '../../core/files/boundedRead';
import { BatonError } from '../../core/errors';
import { plural } from '../../core/plural';
import { errorText } from '../../core/log';
import { type Hook, HookUrl, HooksAddParams, HooksListParams } from '../../core/protocol';
import { pingRequest } from '../../core/formats/webhook';
import { type Command, arg, show } from './command';
import { cliFlags, paramFlags } from './flags';
import { ago, formatTable, truncate } from './output';

const listFlags = paramFlags(HooksListParams, { recent: {} });
const addFlags = paramFlags(HooksAddParams, {
	events: { value: 'TYPES', description: 'Only these event types; default all' },
});
const secretFlags = cliFlags({
	secretFile: {
		type: 'string',
		value: 'FILE',
		description: 'File holding the HMAC secret (at least 16 characters; trailing newline ignored)',
	},
});
const noTestFlag = cliFlags({
	noTest: { type: 'boolean', description: 'Add without pinging the receiver first (it is not up yet)' },
});

const pingTimeoutMs = 10_000;

function readSecret(file: string | undefined): string {
	if (file === undefined) {
		throw new BatonError('invalid_input', 'Give the secret in a file: --secret-file FILE (it is never printed).');
	}
	const text = readBoundedText(file, { maxBytes: maxSecretBytes, what: 'the secret file' });
	const secret = text.replace(/\r?\n$/, '');
	if (secret.length < 16) {
		throw new BatonError('invalid_input', `The secret in ${file} is shorter than 16 characters.`);
	}
	return secret;
}

function checkUrl(url: string): string {
	const parsed = HookUrl.safeParse(url);
	if (!parsed.success) {
		throw new BatonError('invalid_input', `${url}: ${parsed.error.issues[0]?.message ?? 'not a valid URL'}`);
	}
	return parsed.data;
}

/** POSTs a signed ping; resolves with the answer's status, throws a BatonError saying why it failed. */
async function ping(url: string, secret: string): Promise<number> {
	const request = pingRequest(secret, Math.floor(Date.now() / 1000), `baton/${packageJson.version}`);
	let response: Response;
	try {
		response = await fetch(url, {
			method: 'POST',
			headers: request.headers,
			body: request.body,
			signal: AbortSignal.timeout(pingTimeoutMs),
			redirect: 'manual',
		});
	} catch (e) {
		const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
		throw new BatonError('unavailable', `${url} did not answer the test ping (${errorText(e)}${cause}).`);
	}
	await response.body?.cancel().catch(() => undefined);
	if (!response.ok) {
		throw new BatonError(
			'unavailable',
			`${url} answered the test ping with HTTP ${response.status}; it must answer 2xx.`,
		);
	}
	return response.status;
}

function hookText(h: Hook): string {
	const state: string =
		h.paused !== null
			? `PAUSED: ${h.paused}; \`baton hooks resume ${h.id}\` lets it deliver`
			: h.failures > 0
				? `FAILING since ${ago(h.failingSince)}: ${plural(h.failures, 'attempt')}, last: ${h.lastError ?? '?'}; next ${h.nextAttemptAt ?? '-'}`
				: 'ok';
	const lines = [
		`${h.id}  ${h.url}`,
		`  events ${h.events.length === 0 ? 'all' : h.events.join(', ')}  secret ${h.secretFingerprint}  added ${ago(h.createdAt)} by ${h.createdBy}`,
		`  ${state}; delivered ${h.delivered} (last ${ago(h.lastDeliveredAt)}), cursor seq ${h.cursor}, ${plural(h.behind, 'event')} behind`,
	];
	if (h.recent.length > 0) {
		const rows = h.recent.map(d => [
			d.deliveryId,
			String(d.attempt),
			d.outcome,
			d.status === null ? '-' : String(d.status),
			d.ms === null ? '-' : `${d.ms} ms`,
			ago(d.at),
			truncate(d.error ?? '', 80),
		]);
		const table = formatTable(['DELIVERY', 'TRY', 'OUTCOME', 'HTTP', 'TIME', 'AT', 'ERROR'], rows);
		lines.push(...table.split('\n').map(l => `  ${l}`));
	}
	return lines.join('\n');
}

const list: Command = {
	name: 'hooks',
	summary: 'List the outgoing webhooks with their recent deliveries and failures',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: listFlags.options,
	notes:
		'Add one with: baton hooks add URL --secret-file FILE [--events claimed,completed]. Each event is POSTed\n' +
		'as JSON, signed with X-Baton-Signature: sha256=HMAC(secret, "<X-Baton-Timestamp>.<body>"), in seq order,\n' +
		'and retried with backoff (1 s doubling to 5 min) until the receiver answers 2xx (docs/guide.md).',
	async run(ctx) {
		const hub = await ctx.hub();
		const r = await hub.request('hooks/list', listFlags.read(ctx.values));
		show(ctx, r, () => (r.hooks.length === 0 ? 'No hooks.' : r.hooks.map(hookText).join('\n\n')));
		return 0;
	},
};

const add: Command = {
	name: 'hooks add',
	summary: "POST the backlog's events to a URL, signed with a secret",
	args: 'URL',
	minArgs: 1,
	maxArgs: 1,
	options: { ...addFlags.options, ...secretFlags.options, ...noTestFlag.options },
	notes:
		'The hook gets the events committed after it was added, one POST each, in order. Before adding, a signed\n' +
		'ping (X-Baton-Event: ping) is sent; a receiver that does not answer 2xx is an error and nothing is added.',
	async run(ctx) {
		const url = checkUrl(arg(ctx, 0));
		const secret = readSecret(secretFlags.read(ctx.values).secretFile);
		const { events } = addFlags.read(ctx.values);
		if (!noTestFlag.read(ctx.values).noTest) {
			await ping(url, secret);
		}
		const hub = await ctx.hub();
		const r = await hub.request('hooks/add', { url, secret, ...(events === undefined ? {} : { events }) });
		show(ctx, r, () => `Added hook ${r.hook.id}: ${r.hook.url} (from seq ${r.hook.cursor + 1} on)`);
		return 0;
	},
};

const remove: Command = {
	name: 'hooks remove',
	summary: 'Remove an outgoing webhook (its undelivered events are not sent)',
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: {},
	async run(ctx) {
		const hub = await ctx.hub();
		const r = await hub.request('hooks/remove', { id: arg(ctx, 0) });
		show(ctx, r, () => `Removed hook ${r.hook.id}: ${r.hook.url}`);
		return 0;
	},
};

const resume: Command = {
	name: 'hooks resume',
	summary: 'Let a paused webhook deliver again (a restore pauses the hooks it brings back)',
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: {},
	notes:
		'It sends the events after its cursor, from where the backup left it. A restored copy posts to the same\n' +
		'receivers as the original, under delivery ids of its own: resume it only if the copy replaces the original.',
	async run(ctx) {
		const hub = await ctx.hub();
		const r = await hub.request('hooks/resume', { id: arg(ctx, 0) });
		show(
			ctx,
			r,
			() =>
				`Resumed hook ${r.hook.id}: ${r.hook.url} (from seq ${r.hook.cursor + 1} on, ${plural(r.hook.behind, 'event')} behind)`,
		);
		return 0;
	},
};

const test: Command = {
	name: 'hooks test',
	summary: 'Send a signed ping to a URL, as hooks add does before adding it',
	args: 'URL',
	minArgs: 1,
	maxArgs: 1,
	options: secretFlags.options,
	async run(ctx) {
		const url = checkUrl(arg(ctx, 0));
		const status = await ping(url, readSecret(secretFlags.read(ctx.values).secretFile));
		show(ctx, { url, status }, () => `${url} answered the ping with HTTP ${status}.`);
		return 0;
	},
};

export const hookCommands: readonly Command[] = [list, add, remove, resume, test];
