/**
 * Who is a person and which verbs are a person's: the one place the hub decides "this connection is an
 * agent" (`actsAsAgent`) and the declared list of human verbs it refuses to agents over every face
 * (MCP, the CLI, a raw websocket). requests.ts consults the list for each request before its handler
 * runs, so a new method that is a person's states it here once, with what a person runs instead. It
 * also says how an allowed human verb names its origin in the events it appends. It decides nothing
 * about cards: an agent reviewer's review (the one verb an agent may reach) is core/rules/review.ts's.
 */
import { BatonError } from '../../core/errors';
import type { EventOrigin, Method, ParsedParams } from '../../core/protocol';
import type { Connection } from './connections';

/**
 * An agent, not a person: an MCP session, or a CLI / other face whose hello said its process runs
 * inside a coding agent (`insideAgent`: an agent CLI's marker, an agent CLI parent, or the variables
 * `baton run` gives the agents it starts). Self-declared like the rest of the hello: it stops an
 * agent's own shell from acting as its human, not a process that lies (docs/security.md).
 * The single decision point: a connection authenticated as a dispatched seat is an agent here too.
 */
export function actsAsAgent(conn: Connection): boolean {
	return conn.client === 'mcp' || conn.hello?.insideAgent !== undefined || conn.seat !== undefined;
}

/** What an allowed human verb's events record of who did it (EventData.origin). */
export function originOf(conn: Connection): EventOrigin {
	const why = conn.hello?.insideAgent;
	return {
		client: conn.client ?? 'unknown',
		agent: actsAsAgent(conn),
		...(why === undefined ? {} : { insideAgent: why }),
	};
}

/** One human verb: when a request of its method is one, what it does, and what a person runs instead. */
export interface HumanVerb<M extends Method> {
	/** Whether these params make the request a person's verb (absent: always). */
	when?: (p: ParsedParams<M>) => boolean;
	/** "complete card A1 with force": completes "Only a person can …". */
	what: (p: ParsedParams<M>) => string;
	/** The command a person runs instead, from their own terminal, VS Code or the board. */
	instead: (p: ParsedParams<M>) => string;
	/** `instead` is an action to take, not a command to run (no CLI verb does it). */
	insteadIsAction?: boolean;
	/**
	 * The verb stays open to agents where the backlog's own rules decide: an agent reviewer holding the
	 * review of a card whose review mode asks for an agent (core/rules/review.ts refuses the rest).
	 */
	agentPath?: string;
}

type HumanVerbs = { [M in Method]?: HumanVerb<M> };

const scopeFlags = (p: { scope?: string | undefined; target?: string | undefined; all?: true | undefined }): string =>
	p.all === true || p.scope === 'all' || p.scope === undefined ? '--all' : `--${p.scope} ${p.target ?? ''}`.trimEnd();

/**
 * The human verbs. Reopen is one: a done card was accepted (often approved by a person), and putting
 * it back in the line is that person's call; an agent that finds a fault creates a card or comments.
 */
export const humanVerbs: HumanVerbs = {
	'card/review': {
		what: p => `${p.approve ? 'approve' : 'request changes on'} card ${p.cardId}`,
		instead: p => (p.approve ? `baton approve ${p.cardId}` : `baton reject ${p.cardId} --note TEXT`),
		agentPath: 'an agent reviewer holding the review of a card whose review mode is agent (claim {review: true})',
	},
	'card/complete': {
		when: p => p.force === true,
		what: p => `complete card ${p.cardId} with force`,
		instead: p => `baton complete ${p.cardId} --force`,
	},
	'card/release': {
		when: p => p.force === true,
		what: p => `release card ${p.cardId} with force`,
		instead: p => `baton release ${p.cardId} --force`,
	},
	// Reclaiming every expired lease is housekeeping; taking one card from its holder is an override.
	'card/reclaim': {
		when: p => p.cardId !== undefined,
		what: p => `reclaim card ${p.cardId ?? ''}`,
		instead: p => `baton reclaim ${p.cardId ?? ''}`,
	},
	'agent/reclaim': {
		what: p => `reclaim the cards of agent ${p.agentId}`,
		instead: p => `baton reclaim --from ${p.agentId}`,
	},
	'card/unblock': {
		what: p => `unblock card ${p.cardId}`,
		instead: p => `baton unblock ${p.cardId}`,
	},
	'card/reopen': {
		what: p => `reopen card ${p.cardId}`,
		instead: p => `baton reopen ${p.cardId}`,
	},
	// An agent may create cards (follow-ups, a plan), but only with the backlog's review or a person's:
	// a card it creates with `review: none` (or `agent`) and then claims would skip the gate.
	'card/create': {
		when: p => p.cards.some(c => c.review !== undefined && c.review !== 'human'),
		what: p =>
			`create a card whose review is ${p.cards.find(c => c.review !== undefined && c.review !== 'human')?.review ?? ''}`,
		instead: () => 'baton create TITLE --review MODE (or leave review out: the backlog setting applies)',
	},
	// Who approves a card is the person's call: an agent lowering its card's review would skip the gate.
	'card/update': {
		when: p => p.review !== undefined,
		what: p => `change the review mode of card ${p.cardId}`,
		instead: p => `baton edit ${p.cardId} --review ${p.review ?? 'human'}`,
	},
	'card/assign': {
		what: p => `assign card ${p.cardId}`,
		instead: p => (p.assignee === null ? `baton assign ${p.cardId} --clear` : `baton assign ${p.cardId} ${p.assignee}`),
	},
	'settings/update': {
		what: p => `change the backlog's settings (${changedKeys(p).join(', ')})`,
		instead: () => 'baton settings',
	},
	'project/settings/update': {
		what: p => `change project ${p.project}'s settings (${changedKeys(p, ['project']).join(', ')})`,
		instead: p => `baton settings --project ${p.project}`,
	},
	'pause/set': {
		what: p => `pause ${p.scope === 'all' ? 'everything' : `${p.scope} ${p.target ?? ''}`}`,
		instead: p => `baton pause ${scopeFlags(p)}`,
	},
	'pause/clear': {
		what: p =>
			`lift the pause of ${p.all === true || p.scope === 'all' ? 'everything' : `${p.scope ?? ''} ${p.target ?? ''}`}`,
		instead: p => `baton resume ${scopeFlags(p)}`,
	},
	// Like pause --stop: stopping the agents of a run (or every run) is the person's call.
	'run/stop': {
		what: p => `${p.stop === true ? 'stop' : 'drain'} ${p.name === undefined ? 'every run' : `run ${p.name}`}`,
		instead: p =>
			`Stop Agents in VS Code (or Ctrl-C in the terminal of baton run${p.name === undefined ? '' : ` --name ${p.name}`})`,
		insteadIsAction: true,
	},
	'hooks/add': {
		what: p => `add a webhook to ${p.url}`,
		instead: p => `baton hooks add ${p.url}`,
	},
	'hooks/remove': {
		what: p => `remove webhook ${p.id}`,
		instead: p => `baton hooks remove ${p.id}`,
	},
	'hooks/resume': {
		what: p => `resume webhook ${p.id}`,
		instead: p => `baton hooks resume ${p.id}`,
	},
	'workspace/gc': {
		when: p => p.force === true && p.dryRun !== true,
		what: () => 'delete unlanded work with gc --force',
		instead: () => 'baton gc --force',
	},
};

/** The keys a settings update names (those it changes), never their values. */
export function changedKeys(p: object, leaveOut: readonly string[] = []): string[] {
	return Object.entries(p)
		.filter(([k, v]) => v !== undefined && !leaveOut.includes(k))
		.map(([k]) => k)
		.sort();
}

/** The human verb `method` with `params` is, if it is one. */
export function humanVerbOf<M extends Method>(method: M, params: ParsedParams<M>): HumanVerb<M> | undefined {
	const verb: HumanVerb<M> | undefined = humanVerbs[method];
	return verb === undefined || (verb.when !== undefined && !verb.when(params)) ? undefined : verb;
}

/**
 * Refuses `verb` to an agent connection (nothing has run yet, so nothing changes), saying what a person
 * can run instead; lets it through for a person, and for an agent where the verb has an agent path.
 */
export function gateHumanVerb<M extends Method>(conn: Connection, verb: HumanVerb<M>, params: ParsedParams<M>): void {
	if (!actsAsAgent(conn) || verb.agentPath !== undefined) {
		return;
	}
	const what = verb.what(params);
	const inside = conn.hello?.insideAgent;
	const from =
		conn.client === 'mcp'
			? 'an MCP session is an agent'
			: conn.seat !== undefined
				? `an agent started by baton run for card ${conn.seat.cardId}`
				: `this command runs inside a coding agent: ${inside ?? 'unknown'}`;
	throw new BatonError(
		'unauthorized',
		`Only a person can ${what} (${from}). ${askPerson(verb, params)} An agent acts only on the cards its own session claimed.`,
		{ override: what, humanVerb: true, instead: verb.instead(params) },
	);
}

/** What a refusal of `verb` tells the agent to ask of a person: the command, or the action, they take instead. */
export function askPerson<M extends Method>(verb: HumanVerb<M>, params: ParsedParams<M>): string {
	const instead = verb.instead(params);
	return verb.insteadIsAction === true
		? `Ask a person to use ${instead}.`
		: `Ask a person to run \`${instead}\` from their own terminal, VS Code or the board.`;
}
