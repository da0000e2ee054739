// What agentd says to its agent: the notices in its inbox, the refusals and
// the answers that tell it which `agency` command to run next. They are the
// daemon's half of the conversation whose other half is the prompt
// (prompts/agent.md): the same commands, written the same way, so an agent
// reads one voice. The sentences are the contract with the agent (and tests
// match them): change one here, and the prompt with it when it names a step.
//
// A new sentence goes in the section of the part that says it, as a function
// of what varies (a task, an agent, a commit), using the command forms below
// rather than spelling a command out again.

/** The commands the sentences name most, spelled once, as the prompt spells them. */
export const COMMANDS = {
  claimNext: 'agency claim --next',
  integrate: 'agency integrate',
  wait: 'agency wait',
  inbox: 'agency inbox',
  status: 'agency status',
  assistStop: 'agency assist --stop "<what you learned>"',
  noteLearned: 'agency note --kind note|failure "<what you learned>"',
  sendPeer: 'agency send <peer> ...'
} as const

const C = COMMANDS
/** the operator's command that gives the swarm a goal (the prompt does not teach it: an agent is not the one to set it) */
const GOAL_SET = 'agency goal set "<goal>" --test "<command>"'
const short = (commit: string): string => commit.slice(0, 12)
const stopAndRecord = `Stop, and record what you learned: ${C.assistStop}`

// --- the board: claims and the plan ---

export const CLAIM_NEEDS_TASK = `claim needs a task, or next to let the daemon pick one (${C.claimNext})`

/** The plan task's steps (core/board/plan-task), after the goal and its tests. */
export const PLAN_STEPS =
  'Read the repository and the goal, then add the tasks that reach it (agency task add, or several at once with agency task add-plan FILE): ' +
  'small tasks with ids, titles, descriptions, dependencies and scopes (the paths each will touch), so that peers can work in parallel without overlapping. ' +
  'Record interface decisions as findings (agency note --kind decision). Then mark this task done: agency done plan.'

// --- the workspace: where a claim or an assist leaves the agent's clone ---

/** A task's branch, ready: `from` says where it started, when it is new. */
export function workspaceOnBranch(dir: string, branch: string, from: string): string {
  return `your workspace ${dir} is on ${branch}${from}: commit your work there, then ${C.integrate}`
}

export function workspaceOnAssistBranch(dir: string, branch: string, from: string): string {
  return `${workspaceOnBranch(dir, branch, from)} (the first passing integration of the task wins)`
}

export function workspaceNotSwitched(branch: string, why: string, task?: string): string {
  return `could not switch your workspace to ${branch}: ${why}${task !== undefined ? `; switch with agency workspace --task ${task} once that is fixed` : ''}`
}

// --- integration: integrate, request-integration, done ---

export const NO_VERIFY_COMMAND = `no verify command: set the goal's test command (${GOAL_SET}) or start agentd with --verify`
export const HOLD_NO_TASK = 'you hold no task: claim one first (agency ready, then agency claim <task>)'

export function holdSeveralTasks(tasks: string[]): string {
  return `you hold ${tasks.length} tasks (${tasks.join(', ')}): name one with agency integrate --task <task>`
}

export function integrateOnlyHeld(why: string): string {
  return `${why}; integrate only a task you hold (${C.status} shows yours; agency claim <task> to take one)`
}

/** An integrate that landed (or found its landing): what comes next, for a holder or an assistant. */
export function integrated(o: { branch: string; commit: string; task: string; assist: boolean; recovered?: boolean }): string {
  const recovered = o.recovered === true ? ' (recovered: the push had landed, its integration entry was missing)' : ''
  const landed = `merged into ${o.branch} as ${short(o.commit)}${recovered}`
  return o.assist
    ? `${landed}: your assist landed first, so ${o.task} is done by you (its holder and the other assistants are told to stop); next: ${C.claimNext}`
    : `${landed}; when the task is finished: agency done ${o.task}`
}

export function alreadyOnSharedBranch(commit: string, task: string): string {
  return `already on the shared branch (${short(commit)}); when the task is finished: agency done ${task}`
}

export function noNewCommits(o: {
  assist: boolean
  branch: string
  sharedBranch: string
  dir: string
  again: string
  noChangeTask?: string
}): string {
  const noChange = o.noChangeTask !== undefined ? `; if the task needs no change, agency done ${o.noChangeTask} --no-change "<why>"` : ''
  return `your ${o.assist ? 'assist' : 'task'} branch ${o.branch} has no commits beyond ${o.sharedBranch}: commit your work in ${o.dir} (git add -A && git commit -m "<what you did>") and ${o.again} again${noChange}`
}

export function doneWithoutWork(task: string, epoch: number): string {
  return `task ${task}@${epoch} has no work on the shared branch yet: commit in your workspace and run agency integrate --task ${task} first; if the task needs no change, agency done ${task} --no-change "<why>"`
}

export const GOAL_NEEDS_TEST = `the goal needs a test command, whose passing tests mean it is met: ${GOAL_SET}`

// --- background integration (agency integrate --background) ---

export function assistNotInBackground(task: string): string {
  return `you assist ${task}, you do not hold it: integrate an assist without --background (${C.integrate})`
}

export function acceptedForVerify(task: string, epoch: number, commit: string, integrator: string): string {
  return `accepted: ${task}@${epoch} (${short(commit)}) is on its way; an integrator serves the swarm (${integrator}), so your daemon verifies it on the shared branch first, then asks the integrator to land it, and marks it done when it lands. Go on with ${C.claimNext}; a notice tells you if it did not pass or land (then claim returns ${task} to fix first)`
}

export function acceptedToIntegrate(task: string, epoch: number, commit: string): string {
  return `accepted: ${task}@${epoch} (${short(commit)}) is on its way; your daemon integrates it and marks it done when it lands. Go on with ${C.claimNext}; a notice tells you if it did not land (then claim returns ${task} to fix first)`
}

export function verifyingAlready(task: string): string {
  return `your daemon is verifying ${task} already: go on with ${C.claimNext}; a notice tells you if it did not pass`
}

/**
 * What the holder is told when its daemon's verify of a background integrate
 * (made while an integrator serves the swarm) did not pass: no request was
 * written, nothing was pushed, and the task is its current task again.
 */
export function backgroundVerifyFailed(task: string, epoch: number, what: string): string {
  return `your background integrate of ${task}@${epoch} did not pass your daemon's verify on the shared branch (${what}), so it was not handed to the integrator: see agency find "${task}" for why. ${task} is your current task again, before any other (${C.claimNext} puts you back on it): fix it and integrate it again (agency integrate --background --task ${task}).`
}

/** What the author of an integration request is told of its result: as the holder, or as an assistant of the task. */
export function requestResult(
  i: { task: string; epoch: number; result: string; commit: string; paths: string[] },
  assisted: boolean
): string {
  const at = `${i.task}@${i.epoch}`
  if (i.result === 'merged') {
    return assisted
      ? `your assist's integration request for ${at} landed on the shared branch as ${short(i.commit)}: it landed first, so ${i.task} is done by you (its holder and the other assistants are told to stop). Next: ${C.claimNext}.`
      : `your integration request for ${at} landed on the shared branch as ${short(i.commit)}: your daemon marked ${i.task} done (no agency done needed).`
  }
  if (i.result === 'fenced') {
    return assisted
      ? `your assist's integration request for ${at} did not land: another agent's work for ${i.task} landed first on the shared remote (the first passing integration wins). ${stopAndRecord}.`
      : `your integration request for ${at} did not land: another agent's work for ${i.task} landed first on the shared remote (agency find "${i.task}" says whose). Stop working on it, record what you learned (${C.noteLearned}), then pick another task.`
  }
  const what = `(${i.result}${i.paths.length > 0 ? ` in ${i.paths.join(', ')}` : ''}): see agency find "${i.task}" for why`
  if (!assisted)
    return `your integration request for ${at} did not land ${what}. ${i.task} is your current task again, before any other (${C.claimNext} puts you back on it): fix it and integrate it again (agency integrate --background --task ${i.task}, or agency request-integration --task ${i.task} while an integrator serves the swarm).`
  return i.result === 'refused'
    ? `your assist's integration request for ${at} did not land ${what}. If ${i.task} is done or moved on, stop and record what you learned: ${C.assistStop}; else fix it on your assist branch and agency request-integration again.`
    : `your assist's integration request for ${at} did not land ${what}; ${i.task} is not done. Fix it on your assist branch and agency request-integration again, or give up: ${C.assistStop}.`
}

// --- assists (docs/assist.md) ---

/** What an assistant is told when the task it assists is done already: nothing of its was pushed. */
export function doneFirst(task: string, by: string, me: string): string {
  if (by === me) return `task ${task} is done, by you: nothing more to land for it; next: ${C.claimNext}`
  return `task ${task} was done by ${by} first: your work was not pushed (the first passing integration wins). ${stopAndRecord}`
}

/** What an assistant is told when the remote's fence shows another agent's work landed first. */
export function landedFirst(agent: string, task: string, epoch: number): string {
  return `${agent}'s work for ${task}@${epoch} landed first on the shared remote: yours was not pushed (the first passing integration wins). ${stopAndRecord}`
}

export function assisting(task: string, holder: string, branch: string): string {
  return `you assist ${task} (held by ${holder}); the first passing integration of it wins: commit on ${branch || 'your branch'}, then ${C.integrate}. Stop when told, or when you give up: ${C.assistStop}`
}

export function assistOffer(task: string): string {
  return `assist ${task} with an approach unlike those listed: agency assist --task ${task} --approach "<your approach>"`
}

export function nothingToAssist(why: string): string {
  return `nothing to assist now: ${why}. ${C.wait}`
}

export const ASSIST_NOTHING_TO_STOP = 'you assist no task: nothing to stop (agency assist shows a task you may assist)'
export const ASSIST_SAY_WHAT_LEARNED = 'say what you learned: agency assist --stop "<what worked, what did not, and why>"'

export function assistEnded(task: string): string {
  return `your assist of ${task} has ended and what you learned is on the record; next: ${C.claimNext}`
}

export function assistedTaskUnheld(task: string): string {
  return `task ${task} is held by nobody now: claim it (agency claim ${task}) and land your work as its holder, or end your assist (${C.assistStop})`
}

export function assistantJoined(assistant: string, task: string, approach: string): string {
  return `${assistant} joined your task ${task} as an assistant, with this approach: ${approach}. It works on its own branch and does not take your lease; the first passing integration of ${task} wins. Carry on with your own approach; you may message it (agency send ${assistant} ...).`
}

export function assistedTaskDone(task: string, by: string, commit: string): string {
  return `task ${task}, which you assist, was done by ${by} (commit ${short(commit)}). Stop working on it, and record what you learned: ${C.assistStop}.`
}

export function holderMayNotAssist(held: string[]): string {
  return `you hold ${held.join(', ')}: only an agent that holds no task assists; finish it (agency integrate, then agency done) or release it first`
}

export function assistingAlready(task: string, approach: string): string {
  return `you already assist ${task} (approach: ${approach}); one assist at a time: carry on with it, or end it with ${C.assistStop}`
}

export const PLAN_NOT_ASSISTED = `the plan task is not assisted: wait for its tasks (${C.wait})`

export function claimInsteadOfAssist(task: string, state: string): string {
  return `task ${task} is not held by a live agent (it is ${state}): claim it instead (agency claim ${task})`
}

export function nameYourApproach(task: string): string {
  return `name your approach: agency assist --task ${task} --approach "<how you will do it, unlike the approaches listed>"`
}

// --- hand-offs by speed ---

export function handedAway(o: { task: string; epoch: number; receiver: string; why: string; branch: string }): string {
  const { task, receiver } = o
  return `your task ${task} was handed to ${receiver} by speed: ${o.why}. Your claim on ${task}@${o.epoch} has ended: stop working on it. ${o.branch !== '' ? `Your work so far is at ${o.branch}, where ${receiver} starts from` : 'None of your work was pushed'}; an integrate of ${task} by you is refused from now on. Record what you learned, for whoever goes on with it: agency note --kind note|failure "<what you learned about ${task}>"; then ${C.claimNext}.`
}

export function handedToYou(o: {
  task: string
  epoch: number
  from: string
  notes: string
  workspace: string
  fromAssist: boolean
}): string {
  const { task, from } = o
  return `${from} handed its task ${task} to you by speed${o.notes !== '' ? ` (${o.notes})` : ''}. You hold ${task}@${o.epoch} now: ${o.workspace !== '' ? o.workspace : 'carry on with it'}. ${o.fromAssist ? "Your assist ended: your approach goes on as the holder's" : `Your task branch starts from ${from}'s work`}; once it has landed: agency done ${task}.`
}

// --- notices of what peers did ---

/** Said after a board event that concerns the agent's task: an overlap, or a task lost (done by another, or taken). */
export function afterTaskEvent(kind: 'overlap' | 'lost-done' | 'lost'): string {
  if (kind === 'overlap') return ` Message that peer (${C.sendPeer}) and agree who changes what before editing shared files.`
  if (kind === 'lost-done') return ` Stop working on it, and record what you learned (${C.noteLearned}), then pick another task.`
  return ` Stop working on it; send the new holder anything useful you have (${C.sendPeer}), then pick another task.`
}

export function reviewRequested(author: string, target: string, note: string): string {
  return `${author} asks you to review ${target}${note !== '' ? `: ${note}` : ''}. Check it out, run the tests, then agency review approve|reject ${target} with your evidence.`
}

export function goalChanged(text: string, testCommand: string): string {
  return `the goal changed: ${text}${testCommand !== '' ? ` (tests: ${testCommand})` : ''}. Check that your task still serves it (${C.status}).`
}

// --- agency wait: what to do now ---

export const GOAL_MET = "the goal is met: every task is done and the shared branch's tests pass. Stop."
export const WAIT_AGAIN = `nothing to take yet: peers hold every open task. Run ${C.wait} again.`

export function unreadInbox(unread: number): string {
  return `${unread} unread in your inbox: ${C.inbox}`
}

export function carryOnWith(held: string[]): string {
  return `you hold ${held.join(', ')}: carry on with it (agency task show ${held[0]})`
}

export function readyToClaim(ids: string[]): string {
  return `ready to claim: ${ids.slice(0, 10).join(', ')}${ids.length > 10 ? ', ...' : ''} (${C.claimNext})`
}
