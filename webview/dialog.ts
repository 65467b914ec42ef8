/**
 * Modal questions as <dialog> elements: VS Code webviews forbid window.confirm/prompt (the iframe has
 * no allow-modals), so the board asks in its own page. Each helper resolves when the human answers;
 * Escape or Cancel resolves with "no answer".
 */

function dialogShell(
	title: string,
	message: string,
): { dialog: HTMLDialogElement; form: HTMLFormElement; actions: HTMLElement } {
	const dialog = document.createElement('dialog');
	dialog.className = 'dialog';
	const form = document.createElement('form');
	form.method = 'dialog';
	const h = document.createElement('h2');
	h.className = 'dialog-title';
	h.textContent = title;
	h.id = `dialog-title-${Math.random().toString(36).slice(2)}`;
	dialog.setAttribute('aria-labelledby', h.id);
	form.append(h);
	if (message !== '') {
		const p = document.createElement('p');
		p.className = 'dialog-message';
		p.textContent = message;
		form.append(p);
	}
	const actions = document.createElement('div');
	actions.className = 'dialog-actions';
	dialog.append(form);
	return { dialog, form, actions };
}

function button(label: string, value: string, primary: boolean): HTMLButtonElement {
	const b = document.createElement('button');
	// Only the confirming button submits: Enter in a field submits with the form's first submit button,
	// which would otherwise be Cancel (it comes first).
	b.type = primary ? 'submit' : 'button';
	if (!primary) {
		b.addEventListener('click', () => b.closest('dialog')?.close(value));
	}
	b.value = value;
	b.textContent = label;
	b.className = primary ? 'btn btn-primary' : 'btn';
	return b;
}

function run<T>(dialog: HTMLDialogElement, result: () => T, cancelled: T): Promise<T> {
	document.body.append(dialog);
	return new Promise<T>(resolve => {
		dialog.addEventListener('close', () => {
			const value = dialog.returnValue === 'ok' ? result() : cancelled;
			dialog.remove();
			resolve(value);
		});
		dialog.showModal();
	});
}

/** Yes/no question; resolves true only for the confirm button. */
export function confirmDialog(title: string, message: string, confirmLabel: string): Promise<boolean> {
	const { dialog, form, actions } = dialogShell(title, message);
	const ok = button(confirmLabel, 'ok', true);
	actions.append(button('Cancel', 'cancel', false), ok);
	form.append(actions);
	const answer = run(dialog, () => true, false);
	ok.focus();
	return answer;
}

/**
 * Asks for one line of text (e.g. a block reason); resolves undefined when cancelled or empty, or ''
 * for an empty `optional` answer (a pause's reason).
 */
export function askText(
	title: string,
	label: string,
	confirmLabel: string,
	maxLength: number,
	optional = false,
): Promise<string | undefined> {
	const { dialog, form, actions } = dialogShell(title, '');
	const field = document.createElement('label');
	field.className = 'field';
	field.textContent = label;
	const input = document.createElement('input');
	input.type = 'text';
	input.required = !optional;
	input.maxLength = maxLength;
	input.className = 'input';
	input.name = 'answer';
	field.append(input);
	form.append(field);
	actions.append(button('Cancel', 'cancel', false), button(confirmLabel, 'ok', true));
	form.append(actions);
	const answer = run(
		dialog,
		() => (input.value.trim() === '' && !optional ? undefined : input.value.trim()),
		undefined,
	);
	input.focus();
	return answer;
}
