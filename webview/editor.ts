/**
 * The create / edit card form, shown in a <dialog>. It validates with the protocol's own schemas
 * (the same limits the hub enforces) and shows what is wrong next to the form instead of sending a
 * request that would be refused. It returns the request params; the caller sends them. The review
 * choice (none / human / agent) is sent on create only when picked, on edit only when changed.
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

/** Who approves the card's result (issue 12): '' = the backlog's default (create only). */
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

/** Opens the form; resolves with validated params, or undefined when cancelled. */
export function cardFormDialog(existing: Card | undefined, phases: readonly string[]): Promise<CardFormResult> {
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
	const listId = `phases-${Math.random().toString(36).slice(2)}`;
	const datalist = document.createElement('datalist');
	datalist.id = listId;
	for (const p of phases) {
		const o = document.createElement('option');
		o.value = p;
		datalist.append(o);
	}
	phase.input.setAttribute('list', listId);
	phase.wrap.append(datalist);
	const priority = field('Priority', 'priority', false, 'Higher is sooner');
	(priority.input as HTMLInputElement).type = 'number';
	const body = field('Body (markdown)', 'body', true);
	const acceptance = field('Acceptance criteria', 'acceptance', true, 'One per line');
	const deps = field('Depends on', 'dependsOn', false, 'Card ids, separated by spaces or commas');
	const review = reviewField(existing);

	if (existing !== undefined) {
		title.input.value = existing.title;
		phase.input.value = existing.phase ?? '';
		priority.input.value = String(existing.priority);
		body.input.value = existing.body;
		acceptance.input.value = existing.acceptance.join('\n');
		form.append(title.wrap, phase.wrap, priority.wrap, review.wrap, body.wrap, acceptance.wrap);
	} else {
		priority.input.value = '0';
		form.append(id.wrap, title.wrap, phase.wrap, priority.wrap, review.wrap, body.wrap, acceptance.wrap, deps.wrap);
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
		};
		const parsed = CreateCardInput.safeParse(input);
		return parsed.success
			? { ok: true, result: { kind: 'create', input: parsed.data } }
			: { ok: false, message: describeIssues(parsed.error.issues) };
	};

	return new Promise<CardFormResult>(resolve => {
		let result: CardFormResult;
		form.addEventListener('submit', e => {
			const r = collect();
			if (!r.ok) {
				e.preventDefault();
				problem.textContent = r.message;
				problem.hidden = false;
				return;
			}
			result = r.result;
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
