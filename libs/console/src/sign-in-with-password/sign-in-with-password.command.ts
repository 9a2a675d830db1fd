/** Sign in with an email address and a password. */
export class SignInWithPasswordCommand {
  constructor(
    readonly email: string,
    readonly password: string,
  ) {}
}
