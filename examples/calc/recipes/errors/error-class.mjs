export class CalcError extends Error {
  constructor (message, position = -1) {
    super(position >= 0 ? `${message} at ${position}` : message)
    this.name = 'CalcError'
    this.position = position
  }
}
