// A suggestion from the server, from its arrival to a decision: the offer with buttons, the
// diff view of the files as they would be, and accept / reject. Accepting applies the server's
// own code action (its WorkspaceEdit, then its command, which logs the adoption), so the
// editor and the lightbulb apply exactly the same thing.
import { promises as fs } from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { applyPatch, parsePatch } from './diff';
import { forget, isApplyTitle, pickForFile, remember, SuggestionNotice } from './suggestions';
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

function rewardText(answer: Decision | undefined): string {
    return typeof answer?.reward === 'number' ? ` (reward ${answer.reward.toFixed(2)})` : '';
}

export class SuggestionReview implements vscode.Disposable {
    private items: SuggestionNotice[] = [];
    private readonly documents = new VirtualDocuments(SUGGESTION_SCHEME);

    constructor(private readonly runServerCommand: ServerCommand, private readonly log: vscode.LogOutputChannel) {}

    dispose(): void {
        this.documents.dispose();
    }

    /** A `sage/suggestion` notification: keep it and offer it. */
    received(s: SuggestionNotice): void {
        this.items = remember(this.items, s);
        this.log.info(`suggestion for ${s.task}: ${s.title} (episode ${s.episodeId})`);
        void this.offer(s);
    }

    /** The server logged a decision on the task's suggestion (from here or from the lightbulb). */
    decided(task: string): void {
        this.items = forget(this.items, task);
    }

    /** The suggestion a command means: the active editor's task's, else the latest; undefined (and said so) if none. */
    current(): SuggestionNotice | undefined {
        const editor = vscode.window.activeTextEditor;
        const file = editor?.document.uri.scheme === 'file' ? editor.document.uri.fsPath : undefined;
        const s = pickForFile(this.items, file);
        if (!s) {
            void vscode.window.showInformationMessage(
                'SAGE: no suggestion to decide on. Run "SAGE: Optimize with SAGE" on a kernel; ' +
                'a suggestion appears when the episode finds a faster correct kernel.');
        }
        return s;
    }

    private async offer(s: SuggestionNotice): Promise<void> {
        const choice = await vscode.window.showInformationMessage(`SAGE suggests ${describe(s)}.`, 'Show Diff', 'Accept', 'Reject');
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
        try {
            const patches = parsePatch(s.diff);
            if (patches.length === 0) {
                void vscode.window.showWarningMessage(`SAGE: the suggestion ${describe(s)} changes no file.`);
                return false;
            }
            const query = `${s.episodeId}/${s.attemptId}`;
            for (const patch of patches) {
                const file = path.join(s.task, patch.newPath);
                const current = await this.currentText(file);
                const suggested = this.documents.put(vscode.Uri.file(file).path, applyPatch(current ?? '', patch), query);
                // A file the suggestion creates has no left side on disk: compare with an empty one.
                const left = current === undefined
                    ? this.documents.put(vscode.Uri.file(file).path, '', `${query}/before`)
                    : vscode.Uri.file(file);
                await vscode.commands.executeCommand('vscode.diff', left, suggested,
                    `${patch.newPath} ↔ ${s.title}`, { preview: false });
            }
            return true;
        } catch (e) {
            this.log.error(`cannot show the diff of ${s.title}: ${String(e)}`);
            void vscode.window.showErrorMessage(`SAGE: cannot show the suggestion's diff: ${e instanceof Error ? e.message : String(e)}`);
            return false;
        }
    }

    /** Applies the server's code action for the suggestion: its edit, then its command (logs the adoption). */
    async accept(s: SuggestionNotice): Promise<void> {
        const uri = vscode.Uri.parse(s.uri);
        const document = await vscode.workspace.openTextDocument(uri);
        const whole = new vscode.Range(0, 0, document.lineCount, 0);
        const actions = await vscode.commands.executeCommand<(vscode.CodeAction | vscode.Command)[] | undefined>(
            'vscode.executeCodeActionProvider', uri, whole, vscode.CodeActionKind.RefactorRewrite.value);
        // A bare Command has a string `command`; a CodeAction carries a Command object, or none.
        const action = (actions ?? []).find(
            (a): a is vscode.CodeAction => typeof a.command !== 'string' && isApplyTitle(a.title));
        if (!action) {
            this.decided(s.task);
            void vscode.window.showWarningMessage(
                `SAGE: the server no longer offers ${describe(s)}: it was accepted or rejected already, or the ` +
                'server restarted. Run "SAGE: Optimize with SAGE" again for a new suggestion.');
            return;
        }
        if (action.edit && !(await vscode.workspace.applyEdit(action.edit))) {
            void vscode.window.showErrorMessage(
                `SAGE: VS Code did not apply ${describe(s)} (a file may be read-only or changed meanwhile). Nothing was logged.`);
            return;
        }
        this.decided(s.task);
        const answer = action.command
            ? (await this.runServerCommand(action.command.command, ...((action.command.arguments ?? []) as unknown[]))) as Decision | undefined
            : undefined;
        if (answer?.logged) {
            void vscode.window.showInformationMessage(
                `SAGE: applied ${describe(s)}; your acceptance is logged${rewardText(answer)}. Save to evaluate it.`);
        } else {
            void vscode.window.showWarningMessage(
                `SAGE: applied ${describe(s)}, but the acceptance was not logged: ${answer?.reason ?? 'no answer from the server'}.`);
        }
    }

    async reject(s: SuggestionNotice): Promise<void> {
        const answer = (await this.runServerCommand('sage.rejectSuggestion', s.task, s.episodeId, s.attemptId)) as
            Decision | undefined;
        if (answer === undefined) {
            return; // the server is not running: kept, so it can be rejected once it is back
        }
        this.decided(s.task);
        if (answer.logged) {
            void vscode.window.showInformationMessage(`SAGE: rejected ${describe(s)}; the rejection is logged${rewardText(answer)}.`);
        } else {
            void vscode.window.showWarningMessage(`SAGE: the rejection of ${describe(s)} was not logged: ${answer.reason ?? 'no reason given'}.`);
        }
    }
}
