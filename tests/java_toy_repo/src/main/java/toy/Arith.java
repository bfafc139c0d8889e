package toy;

public class Arith {
    /** The sum of a and b. */
    public static int add(int a, int b) {
        return a - b;
    }
}
