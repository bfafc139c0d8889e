package toy;

/** What every test of the toy shares (nothing yet: the attack suite's base-class attack writes here). */
public abstract class BaseTest {
}
