// A suggestion from the server, from its arrival to a decision: the episode's end offered with
// buttons, VS Code's diff view of each file against the whole text the server sent, and accept /
// reject. Accepting replaces each file's whole text with the suggested one (one WorkspaceEdit, as
// the lightbulb's code action does) and saves those files: the server logs the acceptance when it
// sees the rewrite saved, and says so (sage/decision), as it does for an undo or a rejection.
import { promises as fs } from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
    decisionMessage, DecisionNotice, EpisodeNotice, episodeSeverity, forget, pendingView, pickForFile, remember, replacements,
    Severity, SuggestedFile, SuggestionNotice,
} from './suggestions';
import { VirtualDocuments } from './virtualDocuments';

/** Runs a server command (workspace/executeCommand); undefined when the server is not running. */
export type ServerCommand = (command: string, ...args: unknown[]) => Promise<unknown>;

interface Decision {
    logged?: boolean;
    reward?: number;
    reason?: string;
}

export const SUGGESTION_SCHEME = 'sage-suggestion';

function describe(s: SuggestionNotice): string {
    return `"${s.title}" for ${path.basename(vscode.Uri.parse(s.uri).fsPath)}`;
}

function show(severity: Severity, text: string, ...buttons: string[]): Thenable<string | undefined> {
    if (severity === 'error') {
        return vscode.window.showErrorMessage(text, ...buttons);
    }
    return severity === 'warning'
        ? vscode.window.showWarningMessage(text, ...buttons)
        : vscode.window.showInformationMessage(text, ...buttons);
}

export class SuggestionReview implements vscode.Disposable {
    private items: SuggestionNotice[] = [];
    private readonly documents = new VirtualDocuments(SUGGESTION_SCHEME);
    // Stays while a suggestion waits: the popup that offers it can vanish unanswered.
    private readonly pending = vscode.window.createStatusBarItem('sage.suggestion', vscode.StatusBarAlignment.Left, -1);

    constructor(private readonly runServerCommand: ServerCommand, private readonly log: vscode.LogOutputChannel) {
        this.pending.name = 'SAGE suggestion';
        this.pending.command = 'sage.reviewSuggestion';
    }

    dispose(): void {
        this.documents.dispose();
        this.pending.dispose();
    }

    private refresh(): void {
        const view = pendingView(this.items);
        if (!view) {
            this.pending.hide();
            return;
        }
        this.pending.text = view.text;
        this.pending.tooltip = view.tooltip;
        this.pending.show();
    }

    /** Offers the current suggestion again (the status bar item, "SAGE: Review Suggestion"). */
    async review(): Promise<void> {
        const s = this.current();
        if (s) {
            await this.offer(s);
        }
    }

    /** A `sage/suggestion` notification: keep it (the `sage/episode` that follows offers it). */
    received(s: SuggestionNotice): void {
        this.items = remember(this.items, s);
        this.refresh();
        this.log.info(`suggestion for ${s.task}: ${s.title} (episode ${s.episodeId})`);
    }

    /** A `sage/episode` notification: its message, with the suggestion's buttons when it left one. */
    announced(e: EpisodeNotice): void {
        this.log.info(`episode ${e.episodeId ?? '(none)'} for ${e.task}: ${e.status}, ${e.turns} turns, ${e.model}` +
            `${e.error ? `, ${e.error}` : ''}`);
        const s = this.items.find((x) => x.episodeId === e.episodeId);
        if (s) {
            void this.offer(s, e.message);
        } else {
            void show(episodeSeverity(e), e.message);
        }
    }

    /** A `sage/decision` notification: the server logged what became of a suggestion. */
    decidedBy(d: DecisionNotice): void {
        this.log.info(`decision on ${d.episodeId}: ${d.decision} (${d.reason}), logged ${d.logged}`);
        this.decided(d.task);
        const { severity, text } = decisionMessage(d);
        void show(severity, text);
    }

    /** The server logged a decision on the task's suggestion (from here or from the lightbulb). */
    decided(task: string): void {
        this.items = forget(this.items, task);
        this.refresh();
    }

    /** The suggestion a command means: the active editor's task's, else the latest; undefined (and said so) if none. */
    current(): SuggestionNotice | undefined {
        const editor = vscode.window.activeTextEditor;
        const file = editor?.document.uri.scheme === 'file' ? editor.document.uri.fsPath : undefined;
        const s = pickForFile(this.items, file);
        if (!s) {
            void vscode.window.showInformationMessage(
                'SAGE: no suggestion to decide on. Run "SAGE: Optimize Kernel" on a kernel; ' +
                'a suggestion appears when the episode finds a faster correct kernel.');
        }
        return s;
    }

    private async offer(s: SuggestionNotice, message?: string): Promise<void> {
        const choice = await vscode.window.showInformationMessage(message ?? `SAGE suggests ${describe(s)}.`,
            'Show Diff', 'Accept', 'Reject');
        if (choice === 'Show Diff') {
            if (!(await this.showDiff(s))) {
                return;
            }
            const next = await vscode.window.showInformationMessage(`Accept ${describe(s)}?`, 'Accept', 'Reject');
            await this.decide(s, next);
        } else {
            await this.decide(s, choice);
        }
    }

    private async decide(s: SuggestionNotice, choice: string | undefined): Promise<void> {
        if (!this.items.includes(s)) {
            return; // decided meanwhile, or replaced by a newer suggestion for the task
        }
        if (choice === 'Accept') {
            await this.accept(s);
        } else if (choice === 'Reject') {
            await this.reject(s);
        }
    }

    private async currentText(file: string): Promise<string | undefined> {
        const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === file);
        if (open) {
            return open.getText();
        }
        try {
            return await fs.readFile(file, 'utf8');
        } catch {
            return undefined;
        }
    }

    /** Opens a diff view per file the suggestion changes; false (and said why) when it cannot. */
    async showDiff(s: SuggestionNotice): Promise<boolean> {
        if (s.files.length === 0) {
            void vscode.window.showWarningMessage(`SAGE: the suggestion ${describe(s)} changes no file.`);
            return false;
        }
        try {
            const query = `${s.episodeId}/${s.attemptId}`;
            for (const file of s.files) {
                const current = await this.currentText(file.path);
                const suggested = this.documents.put(vscode.Uri.file(file.path).path, file.text, query);
                // A file the suggestion creates has no left side on disk: compare with an empty one.
                const left = current === undefined
                    ? this.documents.put(vscode.Uri.file(file.path).path, '', `${query}/before`)
                    : vscode.Uri.file(file.path);
                await vscode.commands.executeCommand('vscode.diff', left, suggested,
                    `${file.name} ↔ ${s.title}`, { preview: false });
            }
            return true;
        } catch (e) {
            this.log.error(`cannot show the diff of ${s.title}: ${String(e)}`);
            void vscode.window.showErrorMessage(`SAGE: cannot show the suggestion's diff: ${e instanceof Error ? e.message : String(e)}`);
            return false;
        }
    }

    /** One edit that replaces each file the suggestion changes, whole, from its current text. */
    private async replacementEdit(files: readonly SuggestedFile[]): Promise<vscode.WorkspaceEdit> {
        const documents = new Map<string, vscode.TextDocument>();
        for (const file of files) {
            try {
                documents.set(file.path, await vscode.workspace.openTextDocument(vscode.Uri.file(file.path)));
            } catch {
                // It does not exist yet: the edit creates it.
            }
        }
        const edit = new vscode.WorkspaceEdit();
        for (const { file, create } of replacements(files, (f) => documents.get(f.path)?.getText())) {
            const uri = vscode.Uri.file(file.path);
            const document = documents.get(file.path);
            if (create || !document) {
                edit.createFile(uri, { ignoreIfExists: true });
                edit.insert(uri, new vscode.Position(0, 0), file.text);
            } else {
                const whole = new vscode.Range(new vscode.Position(0, 0), document.lineAt(document.lineCount - 1).range.end);
                edit.replace(uri, whole, file.text);
            }
        }
        return edit;
    }

    /**
     * Writes the suggested files into the editor and saves them: the server logs the acceptance
     * when it sees them saved (sage/decision says so).
     */
    async accept(s: SuggestionNotice): Promise<void> {
        const edit = await this.replacementEdit(s.files);
        if (edit.size > 0 && !(await vscode.workspace.applyEdit(edit))) {
            void vscode.window.showErrorMessage(
                `SAGE: VS Code did not apply ${describe(s)} (a file may be read-only or changed meanwhile). Nothing was logged.`);
            return;
        }
        const unsaved: string[] = [];
        for (const file of s.files) {
            const document = await vscode.workspace.openTextDocument(vscode.Uri.file(file.path));
            if (document.isDirty && !(await document.save())) {
                unsaved.push(file.name);
            }
        }
        if (unsaved.length > 0) {
            void vscode.window.showWarningMessage(
                `SAGE: applied ${describe(s)}, but ${unsaved.join(', ')} could not be saved: the acceptance is logged once it is.`);
        }
    }

    async reject(s: SuggestionNotice): Promise<void> {
        const answer = (await this.runServerCommand('sage.rejectSuggestion', s.task, s.episodeId, s.attemptId)) as
            Decision | undefined;
        if (answer === undefined) {
            return; // the server is not running: kept, so it can be rejected once it is back
        }
        this.decided(s.task);
        if (!answer.logged) {
            void vscode.window.showWarningMessage(`SAGE: the rejection of ${describe(s)} was not logged: ${answer.reason ?? 'no reason given'}.`);
        }
        // Logged: the server's sage/decision says so.
    }
}
