/**
 * The create / edit card form, shown in a <dialog>. It validates with the protocol's own schemas
 * (the same limits the hub enforces) and shows what is wrong next to the form instead of sending a
 * request that would be refused. It returns the request params; the caller sends them, or, given
 * `submit`, the form waits for it and shows the hub's refusal in place (a scope glob only the hub can
 * check), keeping what was typed. The review choice (none / human / agent), the project (a known
 * one offered, or any id typed) and the scope (globs, one a line) are sent on create only when
 * given, on edit only when changed.
 */
import { describeIssues } from '../core/errors';
import {
	type Card,
	type ParsedParams,
	type ReviewMode,
	CardId,
	CreateCardInput,
	UpdateParams,
	limits,
} from '../core/protocol';

export type CardFormResult =
	{ kind: 'create'; input: CreateCardInput } | { kind: 'update'; params: ParsedParams<'card/update'> } | undefined;

export interface CardFormOptions {
	phases: readonly string[];
	/** Projects to offer (seen among the cards, the workspace's); any other id may be typed. */
	projects: readonly string[];
	/** A new card's project to start with (the board's project choice), if one. */
	project?: string | undefined;
	/** Sends the result; a throw is shown in the form, which stays open. */
	submit?: (result: NonNullable<CardFormResult>) => Promise<void>;
}

interface Field {
	wrap: HTMLElement;
	input: HTMLInputElement | HTMLTextAreaElement;
}

function field(label: string, name: string, multiline: boolean, hint?: string): Field {
	const wrap = document.createElement('label');
	wrap.className = 'field';
	const span = document.createElement('span');
	span.className = 'field-label';
	span.textContent = label;
	wrap.append(span);
	const input = multiline ? document.createElement('textarea') : document.createElement('input');
	input.name = name;
	input.className = 'input';
	if (input instanceof HTMLTextAreaElement) {
		input.rows = name === 'body' ? 8 : 3;
	}
	wrap.append(input);
	if (hint !== undefined) {
		const h = document.createElement('span');
		h.className = 'field-hint';
		h.textContent = hint;
		wrap.append(h);
	}
	return { wrap, input };
}

/** An input offering `values` as suggestions (a datalist): any other text may be typed. */
function suggest(f: Field, values: readonly string[]): void {
	const list = document.createElement('datalist');
	list.id = `${f.input.name}-${Math.random().toString(36).slice(2)}`;
	for (const v of values) {
		const o = document.createElement('option');
		o.value = v;
		list.append(o);
	}
	f.input.setAttribute('list', list.id);
	f.wrap.append(list);
}

/** Who approves the card's result: '' = the backlog's default (create only). */
function reviewField(existing: Card | undefined): { wrap: HTMLElement; select: HTMLSelectElement } {
	const wrap = document.createElement('label');
	wrap.className = 'field';
	const span = document.createElement('span');
	span.className = 'field-label';
	span.textContent = 'Review';
	const select = document.createElement('select');
	select.name = 'review';
	select.className = 'input';
	const choices: [ReviewMode | '', string][] = [
		['none', 'None: complete means done'],
		['human', 'A human approves the result'],
		['agent', 'A reviewing agent (or a human) approves it'],
	];
	if (existing === undefined) {
		choices.unshift(['', "The backlog's default"]);
	}
	for (const [value, label] of choices) {
		const o = document.createElement('option');
		o.value = value;
		o.textContent = label;
		select.append(o);
	}
	select.value = existing?.review ?? '';
	wrap.append(span, select);
	return { wrap, select };
}

const reviewModes: readonly string[] = ['none', 'human', 'agent'];
const reviewOf = (value: string): ReviewMode | undefined =>
	reviewModes.includes(value) ? (value as ReviewMode) : undefined;

const lines = (s: string): string[] =>
	s
		.split('\n')
		.map(l => l.trim())
		.filter(l => l !== '');
const ids = (s: string): string[] =>
	s
		.split(/[\s,]+/)
		.map(l => l.trim())
		.filter(l => l !== '');

const sameList = (a: readonly string[], b: readonly string[]): boolean =>
	a.length === b.length && a.every((v, i) => v === b[i]);

/** Opens the form; resolves with validated params (sent, given `submit`), or undefined when cancelled. */
export function cardFormDialog(existing: Card | undefined, options: CardFormOptions): Promise<CardFormResult> {
	const dialog = document.createElement('dialog');
	dialog.className = 'dialog dialog-wide';
	dialog.setAttribute('aria-label', existing === undefined ? 'New card' : `Edit ${existing.id}`);
	const form = document.createElement('form');
	form.method = 'dialog';
	form.noValidate = true;
	const h = document.createElement('h2');
	h.className = 'dialog-title';
	h.textContent = existing === undefined ? 'New card' : `Edit ${existing.id}`;
	form.append(h);

	const id = field('Id (optional)', 'id', false, 'Letters, digits and . _ : -; generated when empty');
	const title = field('Title', 'title', false);
	title.input.maxLength = limits.titleLength;
	const phase = field('Phase', 'phase', false);
	suggest(phase, options.phases);
	const project = field('Project', 'project', false, 'A known project or any project id; empty: no project');
	suggest(project, options.projects);
	const scope = field(
		'Scope',
		'scope',
		true,
		'Files it touches, one per line: globs from the project root (src/auth/**) or lock:name. The hub checks them.',
	);
	const priority = field('Priority', 'priority', false, 'Higher is sooner');
	(priority.input as HTMLInputElement).type = 'number';
	const body = field('Body (markdown)', 'body', true);
	const acceptance = field('Acceptance criteria', 'acceptance', true, 'One per line');
	const deps = field('Depends on', 'dependsOn', false, 'Card ids, separated by spaces or commas');
	const review = reviewField(existing);

	// Editing shows the card's own fields; creating adds the id before them and the dependencies after.
	const fields = [title, phase, priority, review, project, scope, body, acceptance].map(f => f.wrap);
	if (existing !== undefined) {
		title.input.value = existing.title;
		phase.input.value = existing.phase ?? '';
		priority.input.value = String(existing.priority);
		body.input.value = existing.body;
		acceptance.input.value = existing.acceptance.join('\n');
		project.input.value = existing.project ?? '';
		scope.input.value = (existing.scope ?? []).join('\n');
		form.append(...fields);
	} else {
		priority.input.value = '0';
		project.input.value = options.project ?? '';
		form.append(id.wrap, ...fields, deps.wrap);
	}
	const problem = document.createElement('p');
	problem.className = 'dialog-problem';
	problem.setAttribute('role', 'alert');
	problem.hidden = true;
	const actions = document.createElement('div');
	actions.className = 'dialog-actions';
	const cancel = document.createElement('button');
	cancel.type = 'button';
	cancel.className = 'btn';
	cancel.textContent = 'Cancel';
	const save = document.createElement('button');
	save.type = 'submit';
	save.className = 'btn btn-primary';
	save.textContent = existing === undefined ? 'Create' : 'Save';
	actions.append(cancel, save);
	form.append(problem, actions);
	dialog.append(form);
	document.body.append(dialog);

	const collect = (): { ok: true; result: CardFormResult } | { ok: false; message: string } => {
		const prio = Number(priority.input.value.trim() === '' ? '0' : priority.input.value);
		const phaseText = phase.input.value.trim();
		const reviewMode = reviewOf(review.select.value);
		const projectText = project.input.value.trim();
		const scopeList = lines(scope.input.value);
		if (existing !== undefined) {
			const params = {
				cardId: existing.id,
				version: existing.version,
				title: title.input.value,
				body: body.input.value,
				phase: phaseText === '' ? null : phaseText,
				priority: prio,
				acceptance: lines(acceptance.input.value),
				// Sent only when changed: an unchanged field is no edit.
				...(reviewMode === undefined || reviewMode === (existing.review ?? 'none') ? {} : { review: reviewMode }),
				...(projectText === (existing.project ?? '') ? {} : { project: projectText === '' ? null : projectText }),
				...(sameList(scopeList, existing.scope ?? []) ? {} : { scope: scopeList }),
			};
			const parsed = UpdateParams.safeParse(params);
			return parsed.success
				? { ok: true, result: { kind: 'update', params: parsed.data } }
				: { ok: false, message: describeIssues(parsed.error.issues) };
		}
		const idText = id.input.value.trim();
		if (idText !== '' && !CardId.safeParse(idText).success) {
			return { ok: false, message: `id: ${CardId.safeParse(idText).error?.issues[0]?.message ?? 'invalid'}` };
		}
		const input = {
			...(idText === '' ? {} : { id: idText }),
			title: title.input.value,
			...(body.input.value === '' ? {} : { body: body.input.value }),
			...(phaseText === '' ? {} : { phase: phaseText }),
			priority: prio,
			...(lines(acceptance.input.value).length === 0 ? {} : { acceptance: lines(acceptance.input.value) }),
			...(ids(deps.input.value).length === 0 ? {} : { dependsOn: ids(deps.input.value) }),
			...(reviewMode === undefined ? {} : { review: reviewMode }),
			...(projectText === '' ? {} : { project: projectText }),
			...(scopeList.length === 0 ? {} : { scope: scopeList }),
		};
		const parsed = CreateCardInput.safeParse(input);
		return parsed.success
			? { ok: true, result: { kind: 'create', input: parsed.data } }
			: { ok: false, message: describeIssues(parsed.error.issues) };
	};

	return new Promise<CardFormResult>(resolve => {
		let result: CardFormResult;
		const showProblem = (message: string): void => {
			problem.textContent = message;
			problem.hidden = false;
		};
		form.addEventListener('submit', e => {
			const r = collect();
			if (!r.ok || r.result === undefined) {
				e.preventDefault();
				showProblem(r.ok ? 'Nothing to save.' : r.message);
				return;
			}
			const submit = options.submit;
			if (submit === undefined) {
				result = r.result;
				return;
			}
			// The hub has the last word: wait for it, and keep the form (and the text) if it refuses.
			e.preventDefault();
			save.disabled = true;
			problem.hidden = true;
			const sent = r.result;
			submit(sent).then(
				() => {
					result = sent;
					dialog.close();
				},
				(err: unknown) => {
					save.disabled = false;
					showProblem(err instanceof Error ? err.message : String(err));
				},
			);
		});
		cancel.addEventListener('click', () => dialog.close());
		dialog.addEventListener('close', () => {
			dialog.remove();
			resolve(result);
		});
		dialog.showModal();
		title.input.focus();
	});
}
