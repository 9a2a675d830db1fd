import { Injectable } from '@nestjs/common';

/** Process-wide state the readiness probe reports: once draining, load balancers stop sending. */
@Injectable()
export class Lifecycle {
  private drainingSince: Date | null = null;

  startDraining(): void {
    this.drainingSince ??= new Date();
  }

  get draining(): boolean {
    return this.drainingSince !== null;
  }
}
